/* globals_direct: extern instances declared at the top level (named without
 * a control prefix), parsers and controls applied directly by type name
 * (`Sub.apply(...)`, p4c instantiates them in place), a control passed to
 * main by instance name, and a variable named like a type parameter. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header vlan_t {
    bit<16> tci;
    bit<16> etherType;
}

struct metadata {
    bit<32> T;
    bit<16> H;
}

struct headers {
    ethernet_t ethernet;
    vlan_t     vlan;
}

counter(1024, CounterType.packets) global_port_counter;
register<bit<32>>(16) global_state;

parser VlanSub(packet_in packet, inout headers hdr) {
    state start {
        transition select(hdr.ethernet.etherType) {
            0x8100: parse_vlan;
            default: accept;
        }
    }
    state parse_vlan {
        packet.extract(hdr.vlan);
        transition accept;
    }
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        VlanSub.apply(packet, hdr);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control Learn(inout headers hdr, inout metadata meta) {
    action note(bit<32> v) {
        meta.T = v;
    }
    table learn {
        key = { hdr.ethernet.srcAddr: exact; }
        actions = { note; NoAction; }
        default_action = NoAction();
    }
    apply {
        learn.apply();
    }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        bit<32> H = 7;
        Learn.apply(hdr, meta);
        global_port_counter.count((bit<32>)standard_metadata.ingress_port);
        global_state.read(meta.T, H);
        meta.H = (bit<16>)meta.T;
        standard_metadata.egress_spec = 1;
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        global_state.write(0, meta.T);
    }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.vlan);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
