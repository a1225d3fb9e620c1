/* relative_name_action: a top-level action with a relative @name("set_port")
 * belongs, as in p4c, to each top-level control that uses it: one entity per
 * control, MyIngress.set_port and MyEgress.set_port, and a control nested in
 * MyIngress uses MyIngress's. A top-level action with no @name (mark) or with
 * an absolute one (.drop_it) keeps its top-level name wherever it is used.
 * Each action's work shows in the forwarded frame: its port, srcAddr and
 * etherType. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct headers { ethernet_t ethernet; }
struct metadata { }

@name("set_port") action forward(inout standard_metadata_t sm, bit<9> port) {
    sm.egress_spec = port;
}

action mark(inout headers hdr, bit<16> value) {
    hdr.ethernet.etherType = value;
}

@name(".drop_it") action discard(inout standard_metadata_t sm) {
    mark_to_drop(sm);
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

control ByEtherType(inout headers hdr, inout standard_metadata_t sm) {
    table by_type {
        key = { hdr.ethernet.etherType: exact; }
        actions = { forward(sm); mark(hdr); NoAction; }
        default_action = NoAction();
    }
    apply { by_type.apply(); }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    ByEtherType() inner;
    table by_dst {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { forward(standard_metadata); discard(standard_metadata); mark(hdr); }
        default_action = forward(standard_metadata, 1);
    }
    apply {
        by_dst.apply();
        inner.apply(hdr, standard_metadata);
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    action set_src(bit<48> src) {
        hdr.ethernet.srcAddr = src;
    }
    table by_port {
        key = { standard_metadata.egress_port: exact; }
        actions = { set_src; forward(standard_metadata); mark(hdr); NoAction; }
        default_action = NoAction();
    }
    apply {
        by_port.apply();
        if (hdr.ethernet.etherType == 0x0800) {
            forward(standard_metadata, 3);  /* no effect in egress: a direct call */
        }
    }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyDeparser(packet_out packet, in headers hdr) {
    apply { packet.emit(hdr.ethernet); }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
