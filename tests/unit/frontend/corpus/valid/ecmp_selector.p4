/* ecmp_selector: ECMP with an action selector over the 5-tuple (selector
 * keys), a shared action profile, and externs constructed inside table
 * properties (named with @name, as P4Runtime requires). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
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

header l4_t {
    bit<16> sport;
    bit<16> dport;
}

struct metadata {
    bit<16> nhop;
}

struct headers {
    ethernet_t ethernet;
    ipv4_t     ipv4;
    l4_t       l4;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol) {
            6: parse_l4;
            17: parse_l4;
            default: accept;
        }
    }
    state parse_l4 {
        packet.extract(hdr.l4);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    @max_group_size(64)
    action_selector(HashAlgorithm.crc16, 32w1024, 32w14) ecmp_selector;
    // an action profile has no groups: p4c leaves @max_group_size out of its P4Info
    @max_group_size(16)
    action_profile(512) nhop_profile;

    action set_nhop(bit<48> dmac, bit<9> port) {
        hdr.ethernet.srcAddr = hdr.ethernet.dstAddr;
        hdr.ethernet.dstAddr = dmac;
        standard_metadata.egress_spec = port;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }
    action set_nhop_id(bit<16> id) {
        meta.nhop = id;
    }
    action drop() {
        mark_to_drop(standard_metadata);
    }
    table ecmp {
        key = {
            hdr.ipv4.dstAddr: lpm;
            hdr.ipv4.srcAddr: selector;
            hdr.ipv4.protocol: selector;
            hdr.l4.sport: selector;
            hdr.l4.dport: selector;
        }
        actions = { set_nhop; drop; }
        implementation = ecmp_selector;
        size = 1024;
    }
    table nhop {
        key = { meta.nhop: exact; }
        actions = { set_nhop; drop; }
        implementation = nhop_profile;
    }
    table nhop_v2 {
        key = { meta.nhop: exact; hdr.ipv4.dstAddr: exact; }
        actions = { set_nhop; drop; }
        implementation = nhop_profile;
    }
    table wcmp {
        key = {
            hdr.ipv4.dstAddr: exact;
            hdr.l4.sport: selector;
        }
        actions = { set_nhop; set_nhop_id; }
        @name("wcmp_selector")
        implementation = action_selector(HashAlgorithm.crc32, 32w256, 32w10);
        @name("wcmp_counter")
        counters = direct_counter(CounterType.packets_and_bytes);
    }
    apply {
        if (hdr.ipv4.isValid()) {
            if (!ecmp.apply().hit) {
                wcmp.apply();
                nhop.apply();
                nhop_v2.apply();
            }
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.l4);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
