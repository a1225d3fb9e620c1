/* implicit_reject: parser states with no transition statement, empty or
 * after an extract, go to reject (P4-16 "Transition statements"). p4c-bm2-ss
 * writes reject as BMv2's end of parsing ("Explicit transition to reject not
 * supported on this target"), so the frame goes on to the ingress with the
 * headers extracted so far and parser_error NoError; the ingress forwards
 * on what the parser left, so the frames that reach those states show it. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header tag_t {
    bit<8>  kind;
    bit<8>  level;
    bit<16> next;
}

struct metadata {
    bit<8> seen;
}

struct headers {
    ethernet_t ethernet;
    tag_t      tag;
    tag_t      inner;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x88b5: parse_tag;
            0x88b6: nothing_here;
            default: accept;
        }
    }
    state nothing_here {
    }
    state parse_tag {
        packet.extract(hdr.tag);
        meta.seen = 1;
        transition select(hdr.tag.kind) {
            1: parse_inner;
            2: accept;
            default: unfinished;
        }
    }
    state parse_inner {
        packet.extract(hdr.inner);
        meta.seen = 2;
        transition accept;
    }
    state unfinished {
        meta.seen = 3;
        packet.extract(hdr.inner);
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action to_port(bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    table by_seen {
        key = {
            meta.seen: exact;
            hdr.inner.isValid(): exact @name("inner_valid");
        }
        actions = { to_port; NoAction; }
        default_action = NoAction();
    }
    apply {
        standard_metadata.egress_spec = 1;
        if (hdr.tag.isValid()) {
            hdr.tag.level = meta.seen;
        }
        by_seen.apply();
        // what the parser left, in the frame: the table's port cannot hide it
        hdr.ethernet.srcAddr[7:0] = meta.seen;
        if (standard_metadata.parser_error != error.NoError) {
            hdr.ethernet.srcAddr[15:8] = 0xee;
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
        packet.emit(hdr.tag);
        packet.emit(hdr.inner);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
