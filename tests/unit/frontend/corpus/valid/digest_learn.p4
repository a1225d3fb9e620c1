/* digest_learn: MAC learning. Unknown source MACs are sent to the
 * controller with digest<T>; the struct type names the P4Info digest. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct mac_learn_digest_t {
    bit<48> srcAddr;
    bit<9>  ingress_port;
}

struct flow_digest_t {
    bit<16> etherType;
    bool    flooded;
}

struct metadata {
    mac_learn_digest_t learn;
}

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
    action learn() {
        meta.learn.srcAddr = hdr.ethernet.srcAddr;
        meta.learn.ingress_port = standard_metadata.ingress_port;
        digest<mac_learn_digest_t>(1, meta.learn);
    }
    action forward(bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    action broadcast() {
        standard_metadata.mcast_grp = 1;
        digest(2, (flow_digest_t){ etherType = hdr.ethernet.etherType, flooded = true });
    }
    table smac {
        key = { hdr.ethernet.srcAddr: exact; }
        actions = { learn; NoAction; }
        size = 4096;
        default_action = learn;
        support_timeout = true;
    }
    table dmac {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { forward; broadcast; }
        size = 4096;
        default_action = broadcast;
    }
    apply {
        smac.apply();
        dmac.apply();
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
