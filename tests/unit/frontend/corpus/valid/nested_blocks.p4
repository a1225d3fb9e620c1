/* nested_blocks: controls and parsers instantiated inside others with
 * constructor arguments (sizes, flags), instances renamed with @name, and a
 * sub-parser applied from a parser state. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header vlan_t {
    bit<3>  pcp;
    bit<1>  dei;
    bit<12> vid;
    bit<16> etherType;
}

struct metadata {
    bit<12> vid;
    bit<16> etherType;
}

struct headers {
    ethernet_t ethernet;
    vlan_t[2]  vlan;
}

parser VlanParser(packet_in packet, inout headers hdr, inout metadata meta)(bit<16> tpid) {
    state start {
        transition select(meta.etherType) {
            tpid: parse_vlan;
            default: accept;
        }
    }
    state parse_vlan {
        packet.extract(hdr.vlan.next);
        meta.vid = hdr.vlan.last.vid;
        meta.etherType = hdr.vlan.last.etherType;
        transition select(hdr.vlan.last.etherType) {
            tpid: parse_vlan;
            default: accept;
        }
    }
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    VlanParser(0x8100) vlan_parser;
    state start {
        packet.extract(hdr.ethernet);
        meta.etherType = hdr.ethernet.etherType;
        vlan_parser.apply(packet, hdr, meta);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control Stats(in bit<32> index)(bit<32> n_counters, bool enabled) {
    counter(n_counters, CounterType.packets_and_bytes) hits;
    apply {
        if (enabled) {
            hits.count(index);
        }
    }
}

control L2(inout headers hdr, inout metadata meta,
           inout standard_metadata_t standard_metadata)(bit<32> table_size) {
    Stats(64, true) port_stats;
    @name("vlan_stats") Stats(4096, false) vstats;

    action set_port(bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    action flood() {
        standard_metadata.mcast_grp = (bit<16>)meta.vid;
    }
    table dmac {
        key = {
            meta.vid: exact;
            hdr.ethernet.dstAddr: exact;
        }
        actions = { set_port; flood; }
        default_action = flood();
        size = table_size;
    }
    apply {
        dmac.apply();
        port_stats.apply((bit<32>)standard_metadata.ingress_port);
        vstats.apply((bit<32>)meta.vid);
    }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    L2(2048) l2;
    apply {
        l2.apply(hdr, meta, standard_metadata);
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
        packet.emit(hdr.vlan);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
