/* aizone fabric: parser, deparser and checksum controls shared by every role. */
#ifndef AIZONE_PARSER_P4
#define AIZONE_PARSER_P4

#include "header.p4"

parser FabricParser(packet_in packet,
                    out headers_t hdr,
                    inout local_metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    state start {
        /* A held packet back from the loop (control/pfc.p4) is a frame as it
         * left egress, whatever ingress_port the target gives it. */
        transition select(standard_metadata.instance_type, standard_metadata.ingress_port) {
            (INSTANCE_RECIRC, _): parse_ethernet;
            (_, CPU_PORT): parse_packet_out;
            default: parse_ethernet;
        }
    }

    state parse_packet_out {
        packet.extract(hdr.packet_out);
        transition parse_ethernet;
    }

    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_IPV6: parse_ipv6;
            ETHERTYPE_ARP: parse_arp;
            ETHERTYPE_MAC_CONTROL: parse_mac_control;
            default: accept;
        }
    }

    state parse_mac_control {
        /* Only the PFC opcode is parsed; other MAC control frames (802.3x
         * PAUSE) stay opaque. Either way the frame ends in ingress. */
        meta.mac_control = true;
        transition select(packet.lookahead<bit<16>>()) {
            MAC_CONTROL_OPCODE_PFC: parse_pfc;
            default: accept;
        }
    }

    state parse_pfc {
        packet.extract(hdr.pfc);
        transition accept;
    }

    state parse_arp {
        packet.extract(hdr.arp);
        transition accept;
    }

    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        meta.ip_proto = hdr.ipv4.protocol;
        meta.dscp = hdr.ipv4.dscp;
        /* Options are not parsed: ingress drops such packets (see checks.p4),
         * since their header checksum could not be kept right. Later
         * fragments carry no L4 header. */
        transition select(hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (0, PROTO_UDP): parse_udp;
            (0, PROTO_TCP): parse_tcp;
            default: accept;
        }
    }

    state parse_ipv6 {
        packet.extract(hdr.ipv6);
        meta.ip_proto = hdr.ipv6.next_hdr;
        meta.dscp = hdr.ipv6.dscp;
        /* Extension headers are not parsed: such packets hash on addresses
         * and next header only. */
        transition select(hdr.ipv6.next_hdr) {
            PROTO_UDP: parse_udp;
            PROTO_TCP: parse_tcp;
            default: accept;
        }
    }

    state parse_tcp {
        packet.extract(hdr.tcp);
        meta.l4_src_port = hdr.tcp.src_port;
        meta.l4_dst_port = hdr.tcp.dst_port;
        transition accept;
    }

    state parse_udp {
        packet.extract(hdr.udp);
        meta.l4_src_port = hdr.udp.src_port;
        meta.l4_dst_port = hdr.udp.dst_port;
        transition select(hdr.udp.dst_port) {
            UDP_PORT_ROCEV2: parse_bth;
            default: accept;
        }
    }

    state parse_bth {
        packet.extract(hdr.bth);
        meta.bth_dst_qp = hdr.bth.dest_qp;
        meta.bth_psn = hdr.bth.psn;
        transition accept;
    }
}

control FabricDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
        packet.emit(hdr.pfc);
        packet.emit(hdr.pfc_pad);
        packet.emit(hdr.arp);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.ipv6);
        packet.emit(hdr.udp);
        packet.emit(hdr.tcp);
        packet.emit(hdr.bth);
    }
}

control FabricVerifyChecksum(inout headers_t hdr, inout local_metadata_t meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid() && hdr.ipv4.ihl == 5,
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
              hdr.ipv4.total_len, hdr.ipv4.identification, hdr.ipv4.flags,
              hdr.ipv4.frag_offset, hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control FabricComputeChecksum(inout headers_t hdr, inout local_metadata_t meta) {
    apply {
        /* TTL and ECN change on the way through: the IPv4 header checksum is
         * recomputed; the UDP checksum does not cover them (nor the IPv6 hop
         * limit and traffic class) and RoCEv2's ICRC masks them, so both stay
         * valid untouched. */
        update_checksum(hdr.ipv4.isValid() && hdr.ipv4.ihl == 5,
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
              hdr.ipv4.total_len, hdr.ipv4.identification, hdr.ipv4.flags,
              hdr.ipv4.frag_offset, hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

#endif
