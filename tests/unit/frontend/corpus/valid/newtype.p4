/* newtype: `type` declarations, one with @p4runtime_translation (the
 * controller sees a 32-bit port id) and one without; used as header and
 * metadata fields, table keys, action data and packet-in metadata. */
#include <core.p4>
#include <v1model.p4>

typedef bit<9> port_t;
@p4runtime_translation("p4.org/psa/v1/PortId_t", 32)
type port_t PortId_t;
type bit<12> VlanId_t;
typedef VlanId_t vid_alias_t;

@controller_header("packet_in")
header packet_in_t {
    PortId_t ingress_port;
    bit<7>   _pad;
}

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header vlan_t {
    bit<4>   pcp_cfi;
    VlanId_t vid;
    bit<16>  etherType;
}

struct metadata {
    PortId_t    in_port;
    vid_alias_t vid;
}

struct headers {
    packet_in_t packet_in;
    ethernet_t  ethernet;
    vlan_t      vlan;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        meta.in_port = (PortId_t)standard_metadata.ingress_port;
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x8100: parse_vlan;
            default: accept;
        }
    }
    state parse_vlan {
        packet.extract(hdr.vlan);
        meta.vid = hdr.vlan.vid;
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action set_out(PortId_t port) {
        standard_metadata.egress_spec = (bit<9>)port;
    }
    action set_vid(vid_alias_t vid) {
        hdr.vlan.vid = vid;
    }
    table port_vlan {
        key = {
            meta.in_port: exact;
            hdr.vlan.vid: exact;
        }
        actions = { set_out; set_vid; NoAction; }
        default_action = NoAction();
    }
    apply {
        port_vlan.apply();
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.egress_port == 255) {
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = meta.in_port;
        }
    }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
        packet.emit(hdr.vlan);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
