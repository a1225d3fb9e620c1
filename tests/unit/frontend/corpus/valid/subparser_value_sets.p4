/* subparser_value_sets: a sub-parser with a value set, instantiated twice:
 * each instance's value set is its own control-plane entity
 * (MyParser.p1.kinds, MyParser.p2.kinds), and a tag's marker header is
 * parsed only when its instance's set holds the tag's kind. The port says
 * which markers were parsed: 1 + (m1 valid) + 2 * (m2 valid). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header tag_t {
    bit<8> kind;
}

header mark_t {
    bit<8> value;
}

struct metadata { }

struct headers {
    ethernet_t ethernet;
    tag_t      t1;
    mark_t     m1;
    tag_t      t2;
    mark_t     m2;
}

parser Tag(packet_in b, out tag_t t, out mark_t m) {
    value_set<bit<8>>(4) kinds;

    state start {
        b.extract(t);
        transition select(t.kind) {
            kinds: found;
            default: accept;
        }
    }
    state found {
        b.extract(m);
        transition accept;
    }
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    Tag() p1;
    Tag() p2;

    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x88b5: tags;
            default: accept;
        }
    }
    state tags {
        p1.apply(packet, hdr.t1, hdr.m1);
        p2.apply(packet, hdr.t2, hdr.m2);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        bit<9> port = 1;
        if (hdr.m1.isValid()) {
            port = port + 1;
        }
        if (hdr.m2.isValid()) {
            port = port + 2;
        }
        standard_metadata.egress_spec = port;
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
        packet.emit(hdr);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
