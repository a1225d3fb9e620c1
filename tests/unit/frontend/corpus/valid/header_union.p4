/* header_union: IPv4 or IPv6 in one union, a stack of unions for nested
 * tunnels, and union validity checks in the ingress. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> totalLen;
    bit<16> identification;
    bit<3>  flags;
    bit<13> fragOffset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdrChecksum;
    bit<32> srcAddr;
    bit<32> dstAddr;
}

header ipv6_t {
    bit<4>   version;
    bit<8>   trafficClass;
    bit<20>  flowLabel;
    bit<16>  payloadLen;
    bit<8>   nextHdr;
    bit<8>   hopLimit;
    bit<128> srcAddr;
    bit<128> dstAddr;
}

header_union ip_t {
    ipv4_t v4;
    ipv6_t v6;
}

struct metadata {
    bit<8> hops;
}

struct headers {
    ethernet_t ethernet;
    ip_t       ip;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x0800: parse_ipv4;
            0x86dd: parse_ipv6;
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ip.v4);
        transition accept;
    }
    state parse_ipv6 {
        packet.extract(hdr.ip.v6);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action route_v4(bit<9> port) {
        standard_metadata.egress_spec = port;
        hdr.ip.v4.ttl = hdr.ip.v4.ttl - 1;
    }
    action route_v6(bit<9> port) {
        standard_metadata.egress_spec = port;
        hdr.ip.v6.hopLimit = hdr.ip.v6.hopLimit - 1;
    }
    table v4_routes {
        key = { hdr.ip.v4.dstAddr: lpm; }
        actions = { route_v4; NoAction; }
        default_action = NoAction();
    }
    table v6_routes {
        key = { hdr.ip.v6.dstAddr: lpm; }
        actions = { route_v6; NoAction; }
        default_action = NoAction();
    }
    apply {
        if (hdr.ip.isValid()) {
            if (hdr.ip.v4.isValid()) {
                v4_routes.apply();
            } else {
                v6_routes.apply();
            }
        } else {
            mark_to_drop(standard_metadata);
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        if (hdr.ip.v6.isValid() && hdr.ip.v6.hopLimit == 0) {
            hdr.ip.v6.setInvalid();
        }
    }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ip);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
