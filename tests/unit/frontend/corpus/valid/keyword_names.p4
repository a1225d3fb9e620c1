/* keyword_names: P4-16's contextual keywords (type, priority, key, actions,
 * entries, state, apply) as the names of fields, parameters, locals, a
 * function's arguments and table keys, all on the packet's path. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> type;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  priority;
    bit<16> totalLen;
    bit<16> identification;
    bit<3>  flags;
    bit<13> fragOffset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdrChecksum;
    bit<32> srcAddr;
    bit<32> dstAddr;
}

struct metadata {
    bit<16> key;
    bit<8>  state;
}

struct headers {
    ethernet_t eth;
    ipv4_t     ipv4;
}

// a function whose parameters are called key and state
bit<8> mix(in bit<8> key, in bit<8> state) {
    return key ^ state;
}

parser P(packet_in packet, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    bit<16> type;
    state start {
        packet.extract(hdr.eth);
        type = hdr.eth.type;
        transition select(type) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        bit<8> state = hdr.ipv4.ttl;
        meta.state = mix(hdr.ipv4.priority, state);
        transition accept;
    }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    bit<16> type = 0;

    action set_class(bit<8> priority, bit<9> state) {
        hdr.ipv4.priority = priority;
        sm.egress_spec = state;
    }
    action tag(bit<16> entries, bit<8> apply) {
        meta.key = entries;
        hdr.ipv4.ttl = apply;
        sm.egress_spec = 2;
    }
    action by_type_port(bit<9> key) {
        type = type + 16w1;
        hdr.eth.type = type;
        sm.egress_spec = key;
    }
    table classify {
        key = {
            hdr.ipv4.priority: ternary;
            meta.state: exact @name("state");
        }
        actions = { set_class; tag; NoAction; }
        default_action = NoAction();
    }
    table by_type {
        key = { type: exact; }
        actions = { by_type_port; NoAction; }
        default_action = NoAction();
    }
    apply {
        bit<16> actions = hdr.eth.type;
        type = actions;
        sm.egress_spec = 1;
        if (hdr.ipv4.isValid()) {
            classify.apply();
        } else {
            by_type.apply();
        }
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }

control D(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.eth);
        packet.emit(hdr.ipv4);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
