/* aizone fabric: wire headers and the pipeline's metadata. */
#ifndef AIZONE_HEADER_P4
#define AIZONE_HEADER_P4

#include "define.p4"

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<7> _pad;
}

@controller_header("packet_out")
header packet_out_t {
    bit<9> egress_port;
    bit<7> _pad;
}

header ethernet_t {
    mac_addr_t dst_addr;
    mac_addr_t src_addr;
    bit<16>    ether_type;
}

/* IEEE 802.1Qbb priority-based flow control frame (MAC control). */
header pfc_t {
    bit<16> opcode;
    bit<16> class_enable;
    bit<16> time0;
    bit<16> time1;
    bit<16> time2;
    bit<16> time3;
    bit<16> time4;
    bit<16> time5;
    bit<16> time6;
    bit<16> time7;
}

/* The zero bytes that pad a PFC frame the program sends to the minimum size. */
header pfc_pad_t {
    bit<208> zero;
}

header arp_t {
    bit<16>     hw_type;
    bit<16>     proto_type;
    bit<8>      hw_len;
    bit<8>      proto_len;
    bit<16>     opcode;
    mac_addr_t  sender_mac;
    ipv4_addr_t sender_ip;
    mac_addr_t  target_mac;
    ipv4_addr_t target_ip;
}

header ipv4_t {
    bit<4>      version;
    bit<4>      ihl;
    bit<6>      dscp;
    bit<2>      ecn;
    bit<16>     total_len;
    bit<16>     identification;
    bit<3>      flags;
    bit<13>     frag_offset;
    bit<8>      ttl;
    bit<8>      protocol;
    bit<16>     hdr_checksum;
    ipv4_addr_t src_addr;
    ipv4_addr_t dst_addr;
}

header ipv6_t {
    bit<4>      version;
    bit<6>      dscp;
    bit<2>      ecn;
    bit<20>     flow_label;
    bit<16>     payload_len;
    bit<8>      next_hdr;
    bit<8>      hop_limit;
    ipv6_addr_t src_addr;
    ipv6_addr_t dst_addr;
}

header udp_t {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> len;
    bit<16> checksum;
}

header tcp_t {
    bit<16> src_port;
    bit<16> dst_port;
    bit<32> seq_no;
    bit<32> ack_no;
    bit<4>  data_offset;
    bit<4>  res;
    bit<8>  flags;
    bit<16> window;
    bit<16> checksum;
    bit<16> urgent_ptr;
}

/* InfiniBand Base Transport Header, as carried by RoCEv2 (IBTA vol 1, 9.2). */
header bth_t {
    bit<8>  opcode;
    bit<1>  solicited;
    bit<1>  mig_req;
    bit<2>  pad_count;
    bit<4>  transport_version;
    bit<16> partition_key;
    bit<1>  fecn;
    bit<1>  becn;
    bit<6>  reserved0;
    qp_t    dest_qp;
    bit<1>  ack_req;
    bit<7>  reserved1;
    bit<24> psn;
}

struct headers_t {
    packet_out_t packet_out;
    packet_in_t  packet_in;
    ethernet_t   ethernet;
    pfc_t        pfc;
    pfc_pad_t    pfc_pad;
    arp_t        arp;
    ipv4_t       ipv4;
    ipv6_t       ipv6;
    udp_t        udp;
    tcp_t        tcp;
    bth_t        bth;
}

struct local_metadata_t {
    /* Filled by the parser for either IP version (0 when absent). */
    bit<8>    ip_proto;
    bit<6>    dscp;
    bit<16>   l4_src_port;
    bit<16>   l4_dst_port;
    /* RoCEv2 BTH destination QP and PSN, for the ACL (0 for other packets). */
    qp_t      bth_dst_qp;
    bit<24>   bth_psn;
    bool      mac_control;
    /* A packet-out from the controller (its header is gone by then). */
    bool      from_cpu;
    /* switch_config. */
    bit<2>    mode;
    bit<32>   hash_salt;
    /* The one field the ECMP selector hashes (control/hashing.p4). */
    bit<32>   ecmp_key;
    next_id_t next_id;
    bool      routed;
    /* set_output ran: the packet has somewhere to go (see control/routing.p4). */
    bool      has_next_hop;
    bool      punted;
    tc_t      tc;
    bit<8>    drop_reason;
    bit<19>   ecn_threshold;
    /* PFC (control/pfc.p4). The clone that becomes a PFC frame (I2E for an
     * XOFF at admission, E2E for a refresh or an XON at a departure) keeps
     * its class and whether it resumes (quanta 0); a held (recirculated)
     * packet keeps where it goes, its class, first ingress port, place in
     * the hold, which lane it goes round, and its priority group's
     * accounting: counted in `pg_bytes` (pg_counted) for pg_len bytes, XON at
     * pg_xon bytes. */
    @field_list(FL_PFC_FRAME) bool    pfc_frame;
    @field_list(FL_PFC_FRAME) tc_t    pfc_class;
    @field_list(FL_PFC_FRAME) bool    pfc_resume;
    @field_list(FL_PFC_HOLD) bool    held;
    @field_list(FL_PFC_HOLD) bit<32> hold_seq;
    @field_list(FL_PFC_HOLD) port_t  hold_port;
    @field_list(FL_PFC_HOLD) tc_t    hold_tc;
    @field_list(FL_PFC_HOLD) port_t  hold_in_port;
    @field_list(FL_PFC_HOLD) bool    pg_counted;
    @field_list(FL_PFC_HOLD) bit<32> pg_len;
    @field_list(FL_PFC_HOLD) bit<32> pg_xon;
    /* Its pause is over and it only waits for its turn: round the drain
     * lane (`pfc_drain`), not the paced loop. */
    @field_list(FL_PFC_HOLD) bool    hold_drain;
    /* A received PFC frame on its way to the egress of the port it came in
     * on, where that port's pause state is kept, with the port's pause
     * quantum (control/pfc.p4, `honour`). */
    bool      pfc_rx;
    bit<32>   pfc_quantum_q16;
    /* A routed packet (or a held one back from the loop) PFC may hold and
     * whose queue may assert XOFF towards its ingress port. */
    bool      pfc_data;
    /* Recirculated this pass: egress skips what only a leaving packet does. */
    bool      recirculating;
}
#endif
