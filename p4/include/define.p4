/* aizone fabric: types, constants and table sizes shared by every role. */
#ifndef AIZONE_DEFINE_P4
#define AIZONE_DEFINE_P4

typedef bit<48>  mac_addr_t;
typedef bit<32>  ipv4_addr_t;
typedef bit<128> ipv6_addr_t;
typedef bit<9>   port_t;
typedef bit<24>  qp_t;
typedef bit<3>   tc_t;
typedef bit<16>  next_id_t;

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<16> ETHERTYPE_ARP  = 0x0806;
const bit<16> ETHERTYPE_IPV6 = 0x86dd;
/* IEEE 802.3 MAC control: 802.1Qbb PFC frames use opcode 0x0101, 802.3x
 * PAUSE 0x0001. Both are link-local and never forwarded. */
const bit<16> ETHERTYPE_MAC_CONTROL = 0x8808;
const bit<16> MAC_CONTROL_OPCODE_PFC = 0x0101;
const mac_addr_t PFC_DST_MAC = 0x0180C2000001;
/* What a PFC frame's source MAC is when the controller gave the port none. */
const mac_addr_t PFC_DEFAULT_SRC_MAC = 0x025046430000;
/* A PFC frame as the program sends it: Ethernet (14) + MAC control (20) +
 * zero padding (26) = 60 bytes, the 64-byte minimum frame without its FCS
 * (veths carry no FCS; p4switch's native PFC sends the same 60 bytes). */
const bit<32> PFC_FRAME_BYTES = 60;
/* Clone session of the PFC frames sent out of port p: PFC_SESSION_BASE + p
 * (the controller creates one per port, egress port p, truncated to
 * PFC_FRAME_BYTES). */
const bit<32> PFC_SESSION_BASE = 1024;
/* @field_list indexes: what an E2E clone (a PFC frame to build) and a
 * recirculated held packet keep of their metadata. */
#define FL_PFC_FRAME 1
#define FL_PFC_HOLD 2

const bit<8>  PROTO_UDP = 17;
const bit<8>  PROTO_TCP = 6;
const bit<8>  PROTO_ICMP = 1;
const bit<8>  PROTO_ICMPV6 = 58;
/* RoCEv2 is UDP with this well-known destination port (IBTA annex A17). */
const bit<16> UDP_PORT_ROCEV2 = 4791;
/* Congestion Notification Packet (IBTA annex A17.9.3). */
const bit<8>  BTH_OPCODE_CNP = 0x81;
/* RC ACKNOWLEDGE: an ACK or NAK, BTH + AETH and no payload (IBTA 9.2, table 38). */
const bit<8>  BTH_OPCODE_RC_ACK = 0x11;

const bit<16> ARP_OP_REQUEST = 1;
const bit<16> ARP_OP_REPLY   = 2;

/* ECN codepoints (RFC 3168): 0 not ECN-capable, 1 ECT(1), 2 ECT(0), 3 CE. */
const bit<2>  ECN_NOT_ECT = 0;
const bit<2>  ECN_CE = 3;

/* BMv2 v1model conventions: simple_switch_grpc --cpu-port 255, drop port 511. */
const port_t  CPU_PORT = 255;
const port_t  DROP_PORT = 511;

/* Routing modes, chosen by the controller at run time (switch_config table). */
const bit<2> MODE_PIN   = 0;  /* destination-slice path pinning: no per-flow hashing */
const bit<2> MODE_ECMP  = 1;  /* 5-tuple */
const bit<2> MODE_EECMP = 2;  /* 5-tuple + RoCEv2 BTH destination QP */

/* Odd 32-bit constant (2^32 / golden ratio) the salted flow hash is
 * multiplied by; see control/hashing.p4 for why. */
const bit<32> ECMP_MIX = 0x9E3779B1;

/* Traffic classes. Class 0 is where unmapped traffic goes; the control class
 * (CNP, and clear-to-send through its DSCP) is the highest. */
const tc_t TC_DEFAULT = 0;
const tc_t TC_CONTROL = 7;
const bit<32> TCS = 8;

/* Drop reasons: the index of FabricIngress.counters.drops. */
const bit<8> DROP_NO_ROUTE    = 1;  /* no route, a drop route, or a next hop with no member */
const bit<8> DROP_TTL         = 2;  /* IPv4 TTL / IPv6 hop limit <= 1 (dropped, not punted) */
const bit<8> DROP_PFC_FRAME   = 3;  /* MAC control (PFC / PAUSE) frame reaching the program */
const bit<8> DROP_ACL         = 4;  /* the ACL said drop */
const bit<8> DROP_NOT_IP      = 5;  /* neither IP nor an ARP request this switch answers */
const bit<8> DROP_PARSER      = 6;  /* parser error, or IPv4 with options (not supported) */
const bit<8> DROP_CHECKSUM    = 7;  /* bad IPv4 header checksum */
const bit<32> DROP_REASONS    = 8;

/* v1model instance_type values (BMv2 simple_switch's). */
const bit<32> INSTANCE_NORMAL = 0;
const bit<32> INSTANCE_INGRESS_CLONE = 1;
const bit<32> INSTANCE_EGRESS_CLONE = 2;
const bit<32> INSTANCE_RECIRC = 4;

/* Counter sizes: per port, and per (port, class) at index port * TCS + tc. */
const bit<32> PORTS = 512;
const bit<32> PORT_TC_SLOTS = 4096;

/* Table sizes. */
#define ROUTE_TABLE_SIZE 4096
#define NEXT_HOP_TABLE_SIZE 1024
#define SELECTOR_SIZE 1024
#define ARP_TABLE_SIZE 256
#define ACL_TABLE_SIZE 256
#define DSCP_TABLE_SIZE 64
#define TC_TABLE_SIZE 8
#define ECN_TABLE_SIZE 4096
#define PFC_QUEUE_TABLE_SIZE 4096
#define PFC_PORT_TABLE_SIZE 512

#endif
