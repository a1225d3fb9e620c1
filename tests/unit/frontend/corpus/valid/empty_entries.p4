/* empty_entries: a table whose `const entries` list is empty is a const
 * table with no initial entries (P4Info: is_const_table, not
 * has_initial_entries): every lookup misses and runs the default action.
 * (A non-const `entries = { }` is the same in P4Info, but BMv2 1.15.5 then
 * refuses the control plane's inserts into it, which P4-16 allows.) */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct metadata { }

struct headers {
    ethernet_t ethernet;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
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
    action tag(bit<16> t) {
        hdr.ethernet.etherType = t;
    }
    table fixed {
        key = { hdr.ethernet.etherType: exact; }
        actions = { to_port; }
        const default_action = to_port(3);
        const entries = { }
    }
    table tagged {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { tag; NoAction; }
        default_action = tag(0x88b6);
    }
    apply {
        fixed.apply();
        tagged.apply();
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
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
