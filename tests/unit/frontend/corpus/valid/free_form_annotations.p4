/* free_form_annotations: unstructured annotation bodies that hold any
 * tokens, characters P4 has no token for too (an apostrophe, $, #, `, ?),
 * on P4Info objects (a table, its key, an action and its parameter) and on
 * others (a header field, a parser state, a statement block). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    @field_note(Don't trust it: 2 bytes $ at most?) bit<48> srcAddr;
    bit<16> etherType;
}

struct metadata { }

struct headers {
    ethernet_t ethernet;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    @state_note(it's the only one, isn't it)
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
    @action_note(sends it on; that's all # there is)
    action forward(@param_note(the port's number) bit<9> port) {
        standard_metadata.egress_spec = port;
        hdr.ethernet.srcAddr = hdr.ethernet.dstAddr;
    }
    @table_note(`six by nine' = 42, or so they say)
    table l2 {
        key = {
            hdr.ethernet.dstAddr: exact @key_note(a MAC's 48 bits);
        }
        actions = { forward; NoAction; }
        default_action = NoAction();
    }
    apply {
        standard_metadata.egress_spec = 1;
        @block_note(what's applied) {
            l2.apply();
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
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
