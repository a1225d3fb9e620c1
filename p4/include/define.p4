/* aizone fabric: types, constants and table sizes shared by every role. */
#ifndef AIZONE_DEFINE_P4
#define AIZONE_DEFINE_P4

typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;
typedef bit<128> ipv6_addr_t;
typedef bit<9>  port_t;
typedef bit<24> qp_t;
typedef bit<3>  tc_t;
typedef bit<16> next_id_t;

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<16> ETHERTYPE_ARP  = 0x0806;
const bit<16> ETHERTYPE_IPV6 = 0x86dd;
/* IEEE 802.3 MAC control (802.1Qbb PFC frames use opcode 0x0101). */
const bit<16> ETHERTYPE_MAC_CONTROL = 0x8808;
const bit<16> MAC_CONTROL_OPCODE_PFC = 0x0101;

const bit<8>  PROTO_UDP = 17;
const bit<8>  PROTO_TCP = 6;
const bit<8>  PROTO_ICMP = 1;
const bit<8>  PROTO_ICMPV6 = 58;
/* RoCEv2 is UDP with this well-known destination port (IBTA annex A17). */
const bit<16> UDP_PORT_ROCEV2 = 4791;

const bit<16> ARP_OP_REQUEST = 1;
const bit<16> ARP_OP_REPLY   = 2;

/* BMv2 v1model conventions. */
const port_t  CPU_PORT = 255;
const port_t  DROP_PORT = 511;

/* Routing modes, chosen by the controller at run time (switch_config table). */
const bit<2> MODE_PIN   = 0;  /* destination-slice path pinning: no hashing */
const bit<2> MODE_ECMP  = 1;  /* 5-tuple */
const bit<2> MODE_EECMP = 2;  /* 5-tuple + RoCEv2 BTH destination QP */

/* Drop reasons, the index of the drop_counter. */
const bit<8> DROP_NO_ROUTE  = 1;
const bit<8> DROP_TTL       = 2;
const bit<8> DROP_PFC_FRAME = 3;
const bit<8> DROP_ACL       = 4;
const bit<8> DROP_NOT_IP    = 5;
const bit<8> DROP_PARSER    = 6;
const bit<32> DROP_REASONS  = 8;

/* Sizes. */
const bit<32> PORTS = 512;
const bit<32> PORT_TC_SLOTS = 4096;  /* port * 8 + tc */
#define ROUTE_TABLE_SIZE 4096
#define NEXT_HOP_TABLE_SIZE 1024
#define SELECTOR_SIZE 1024
#define ARP_TABLE_SIZE 256

#endif
