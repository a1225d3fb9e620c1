/* single_key_lists: a keyset for a single key written as a list of one
 * component, `{ v }` (with a concatenation inside too), in a table's
 * const entries and in a select, as p4c takes it: the same as `v`. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header tag_t {
    bit<8> hi;
    bit<8> lo;
}

struct metadata { }

struct headers {
    ethernet_t ethernet;
    tag_t      tag;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            {16w0x88b5}: parse_tag;
            default: accept;
        }
    }
    state parse_tag {
        packet.extract(hdr.tag);
        transition accept;
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
    table by_tag {
        key = { hdr.tag.hi ++ hdr.tag.lo: exact @name("tag"); }
        actions = { to_port; }
        const default_action = to_port(1);
        const entries = {
            {(8w0x12 ++ 8w0x34)} : to_port(2);
            {16w0x5678} : to_port(3);
            16w0x0102 : to_port(4);
        }
    }
    apply {
        if (hdr.tag.isValid()) {
            by_tag.apply();
        } else {
            standard_metadata.egress_spec = 1;
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
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
