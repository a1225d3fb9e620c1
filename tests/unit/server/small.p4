/* The program of the server tests: one object of every P4Runtime kind.
 *
 * Tables with every match kind (lpm + direct counter + direct meter, an ACL
 * with ternary/exact/range/optional, a small exact table, a const table, an
 * action-selector table, a keyless table), indexed counters, a meter, a
 * register, a digest, a parser value_set, packet-in/out headers. @id pins the
 * P4Runtime ids the tests use.
 *
 * Data plane: a frame from the CPU port goes to its packet_out.egress_port;
 * EtherType 0x88b6 sends digest learn_t {src MAC, ingress port} and is
 * dropped; a broadcast frame goes to the CPU with its ingress port; anything
 * else is forwarded by table `mac` (dropped on a miss). IPv4 packets with
 * protocol 0xfd (EtherType 0x0800 or one in value_set pvs) also run through
 * the other tables and externs (reg[0] = IPv4 source address). */
#include <core.p4>
#include <v1model.p4>

#define CPU_PORT 255

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
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  tos;
    bit<16> total_len;
    bit<16> identification;
    bit<3>  flags;
    bit<13> frag_offset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdr_checksum;
    bit<32> srcAddr;
    bit<32> dstAddr;
}

struct headers_t {
    packet_out_t packet_out;
    packet_in_t  packet_in;
    ethernet_t   ethernet;
    ipv4_t       ipv4;
}

struct learn_t {
    bit<48> src_mac;
    bit<9>  port;
}

struct metadata_t {
    bit<16> l4_port;
    bit<8>  vrf;
    bit<16> ecmp_id;
    bit<2>  color;
}

parser p(packet_in packet, out headers_t hdr, inout metadata_t meta,
         inout standard_metadata_t standard_metadata) {
    @id(0x03000001) value_set<bit<16>>(2) pvs;

    state start {
        transition select(standard_metadata.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }
    state parse_packet_out {
        packet.extract(hdr.packet_out);
        transition parse_ethernet;
    }
    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            pvs: parse_ipv4;
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition accept;
    }
}

control vrfy(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control ingress(inout headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    @id(0x13000001) direct_counter(CounterType.packets_and_bytes) ipv4_counter;
    @id(0x15000001) direct_meter<bit<2>>(MeterType.bytes) ipv4_meter;
    @id(0x12010001) counter(16, CounterType.packets_and_bytes) port_counter;
    @id(0x12010002) counter(4, CounterType.packets) pkt_counter;
    @id(0x14000001) meter(8, MeterType.bytes) port_meter;
    @id(0x16000001) register<bit<32>>(8) reg;
    @id(0x11000001) @max_group_size(16)
    action_selector(HashAlgorithm.crc16, 128, 16) ecmp_sel;

    @id(0x01000001) action set_nhop(bit<9> port, bit<48> dmac) {
        standard_metadata.egress_spec = port;
        hdr.ethernet.dstAddr = dmac;
        ipv4_meter.read(meta.color);
    }
    @id(0x01000003) action miss() { }
    @id(0x01000004) action drop() { mark_to_drop(standard_metadata); }
    @id(0x01000005) action set_port(bit<9> port) { standard_metadata.egress_spec = port; }

    @id(0x02000001) table ipv4_lpm {
        key = { hdr.ipv4.dstAddr: lpm; }
        actions = { set_nhop; NoAction; @defaultonly miss; }
        default_action = NoAction();
        counters = ipv4_counter;
        meters = ipv4_meter;
        size = 1024;
    }

    @id(0x02000002) table acl {
        key = {
            hdr.ipv4.srcAddr: ternary;
            hdr.ipv4.protocol: exact;
            meta.l4_port: range;
            meta.vrf: optional;
        }
        actions = { NoAction; drop; }
        default_action = NoAction();
        size = 64;
    }

    @id(0x02000003) table mac {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { set_port; @tableonly drop; NoAction; }
        default_action = NoAction();
        size = 4;
    }

    @id(0x02000004) table const_tbl {
        key = { hdr.ethernet.etherType: exact; }
        actions = { NoAction; drop; }
        const default_action = drop();
        const entries = {
            0x0800: drop();
            0x86dd: drop();
        }
        size = 8;
    }

    @id(0x02000005) table ecmp {
        key = {
            meta.ecmp_id: exact;
            hdr.ipv4.srcAddr: selector;
            hdr.ipv4.dstAddr: selector;
        }
        actions = { set_port; @defaultonly NoAction; }
        implementation = ecmp_sel;
        size = 64;
    }

    @id(0x02000006) table keyless {
        actions = { set_port; NoAction; }
        default_action = NoAction();
        size = 1;
    }

    apply {
        mark_to_drop(standard_metadata);
        if (hdr.packet_out.isValid()) {
            standard_metadata.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
        } else if (hdr.ethernet.etherType == 0x88b6) {
            digest<learn_t>(1, { hdr.ethernet.srcAddr, standard_metadata.ingress_port });
        } else if (hdr.ethernet.dstAddr == 0xffffffffffff) {
            standard_metadata.egress_spec = CPU_PORT;
        } else {
            mac.apply();
            if (hdr.ipv4.isValid() && hdr.ipv4.protocol == 0xfd) {
                ipv4_lpm.apply();
                acl.apply();
                ecmp.apply();
                keyless.apply();
                const_tbl.apply();
                port_counter.count((bit<32>)standard_metadata.ingress_port);
                pkt_counter.count(0);
                port_meter.execute_meter((bit<32>)standard_metadata.ingress_port, meta.color);
                reg.write(0, hdr.ipv4.srcAddr);
            }
        }
    }
}

control egress(inout headers_t hdr, inout metadata_t meta,
               inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.egress_port == CPU_PORT) {
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = standard_metadata.ingress_port;
        }
    }
}

control cksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control deparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
    }
}

V1Switch(p(), vrfy(), ingress(), egress(), cksum(), deparser()) main;
