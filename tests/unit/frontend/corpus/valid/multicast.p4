/* multicast: L2 forwarding with flooding to a multicast group chosen by
 * the ingress port; egress prunes the copy going back to the sender. */
#include <core.p4>
#include <v1model.p4>

typedef bit<48> macAddr_t;
typedef bit<9>  egressSpec_t;

header ethernet_t {
    macAddr_t dstAddr;
    macAddr_t srcAddr;
    bit<16>   etherType;
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
    action drop() {
        mark_to_drop(standard_metadata);
    }
    action multicast() {
        standard_metadata.mcast_grp = 1;
    }
    action set_mcast_grp(bit<16> grp) {
        standard_metadata.mcast_grp = grp;
    }
    action mac_forward(egressSpec_t port) {
        standard_metadata.egress_spec = port;
    }
    table mac_lookup {
        key = {
            hdr.ethernet.dstAddr : exact;
        }
        actions = {
            multicast;
            mac_forward;
            drop;
        }
        size = 1024;
        default_action = multicast;
    }
    table flood_group {
        key = { standard_metadata.ingress_port: exact; }
        actions = { set_mcast_grp; NoAction; }
        default_action = NoAction;
    }
    apply {
        if (hdr.ethernet.isValid()) {
            switch (mac_lookup.apply().action_run) {
                multicast: {
                    flood_group.apply();
                }
            }
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    action drop() {
        mark_to_drop(standard_metadata);
    }
    apply {
        // Prune multicast packet to ingress port to preventing loop
        if (standard_metadata.egress_port == standard_metadata.ingress_port)
            drop();
        if (standard_metadata.egress_rid != 0) {
            hdr.ethernet.srcAddr = (macAddr_t)standard_metadata.egress_rid;
        }
    }
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
