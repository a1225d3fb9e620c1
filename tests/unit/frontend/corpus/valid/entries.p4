/* entries: non-const entries with explicit priorities (P4 1.2.4 `priority =`),
 * const entries with @priority annotations (BMv2's match order, not P4Runtime
 * priorities), optional and range
 * keys, masks and default keysets, and non-const exact entries. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header ipv4_t {
    bit<8>  ver_ihl;
    bit<8>  tos;
    bit<16> len;
    bit<16> id;
    bit<16> frag;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> csum;
    bit<32> src;
    bit<32> dst;
}

header l4_t {
    bit<16> sport;
    bit<16> dport;
}

struct metadata { }

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
            6 &&& 0xfe: parse_l4;  // 6 (TCP) and 7
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
    action permit() { }
    action deny() {
        mark_to_drop(standard_metadata);
    }
    action to_port(bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    table acl {
        key = {
            hdr.ipv4.src: ternary;
            hdr.ipv4.protocol: optional;
            hdr.l4.dport: range;
        }
        actions = { permit; deny; to_port; }
        default_action = permit();
        entries = {
            priority = 100: (0x0a000000 &&& 0xff000000, 6, 22 .. 22): deny();
            priority = 90:  (_, 17, 53 .. 53): to_port(3);
            priority = 10:  (_, _, 0 .. 1023): permit();
            (0x0a000001, _, _): deny();
        }
    }
    table acl_annotated {
        key = {
            hdr.ipv4.dst: ternary;
            hdr.ipv4.protocol: optional;
        }
        actions = { permit; deny; }
        const entries = {
            (0xc0a80000 &&& 0xffff0000, 6): deny() @priority(3);
            (_, 17): permit() @priority(2);
            (_, _): deny() @priority(1);
        }
    }
    table ports {
        key = { standard_metadata.ingress_port: exact; }
        actions = { to_port; NoAction; }
        default_action = NoAction();
        entries = {
            1: to_port(2);
            2: to_port(1);
        }
    }
    apply {
        if (hdr.ipv4.isValid()) {
            acl.apply();
            acl_annotated.apply();
        }
        ports.apply();
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
