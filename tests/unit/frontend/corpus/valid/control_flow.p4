/* control_flow: switch on a table's action_run (fall-through labels and
 * default), switch on a bit<8> expression, hit/miss tests, user functions
 * (one generic), exit and return. */
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

struct metadata {
    bit<8>  class;
    bit<16> score;
    bool    seen;
}

struct headers {
    ethernet_t ethernet;
    ipv4_t     ipv4;
}

bit<16> max16(in bit<16> a, in bit<16> b) {
    return a > b ? a : b;
}

bit<8> ttl_class(in bit<8> ttl) {
    if (ttl < 16) {
        return 0;
    } else if (ttl < 64) {
        return 1;
    }
    return 2;
}

T pick<T>(in bool c, in T a, in T b) {
    if (c) {
        return a;
    }
    return b;
}

void swap_macs(inout ethernet_t eth) {
    bit<48> tmp = eth.dstAddr;
    eth.dstAddr = eth.srcAddr;
    eth.srcAddr = tmp;
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
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action drop() {
        mark_to_drop(standard_metadata);
    }
    action forward(bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    action reflect() {
        swap_macs(hdr.ethernet);
        standard_metadata.egress_spec = standard_metadata.ingress_port;
    }
    action punt() {
        standard_metadata.egress_spec = 255;
    }
    table fwd {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { forward; reflect; punt; drop; }
        default_action = drop();
    }
    table acl {
        key = { hdr.ipv4.srcAddr: ternary; hdr.ipv4.dstAddr: ternary; }
        actions = { drop; NoAction; }
        default_action = NoAction();
    }
    apply {
        meta.class = ttl_class(hdr.ipv4.ttl);
        meta.score = max16(hdr.ipv4.totalLen, 16w64);
        meta.score = pick(meta.seen, meta.score, 16w0);
        switch (fwd.apply().action_run) {
            forward:
            reflect: {
                meta.seen = true;
            }
            punt: {
                exit;
            }
            default: {
                return;
            }
        }
        switch (meta.class) {
            0: { drop(); }
            1:
            2: { meta.score = meta.score + 1; }
            default: { }
        }
        if (!acl.apply().hit) {
            meta.score = meta.score |+| 100;
        }
        if (acl.apply().miss) {
            meta.seen = false;
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
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
