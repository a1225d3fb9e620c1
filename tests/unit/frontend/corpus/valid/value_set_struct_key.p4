/* value_set_struct_key: a value set of a struct with one field, matched
 * against a single select key of that field's type, as p4c takes it: a
 * member is that field's value. Members go to port 2, the rest to port 1. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header word_t {
    bit<32> w;
}

struct one_word_t {
    bit<32> w;
}

struct metadata {
    bit<1> member;
}

struct headers {
    ethernet_t ethernet;
    word_t     word;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    value_set<one_word_t>(4) words;

    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.word);
        transition select(hdr.word.w) {
            words: found;
            default: accept;
        }
    }
    state found {
        meta.member = 1;
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = meta.member == 1 ? 9w2 : 9w1;
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
        packet.emit(hdr.word);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
