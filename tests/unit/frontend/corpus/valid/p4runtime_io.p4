/* p4runtime_io: packet-in/packet-out through a CPU port with
 * @controller_header headers, indirect and direct counters on the
 * forwarding tables (the shape of the p4runtime tutorial and ONOS's basic
 * pipeline). */
#include <core.p4>
#include <v1model.p4>

#define CPU_PORT 255
#define MAX_PORTS 511

typedef bit<9>   port_num_t;
typedef bit<48>  mac_addr_t;
typedef bit<16>  next_hop_id_t;

const bit<16> ETH_TYPE_IPV4 = 0x0800;

@controller_header("packet_in")
header packet_in_header_t {
    port_num_t ingress_port;
    bit<7>     _padding;
}

@controller_header("packet_out")
header packet_out_header_t {
    @id(1) port_num_t egress_port;
    @id(2) bit<7>     _padding;
}

header ethernet_t {
    mac_addr_t dst_addr;
    mac_addr_t src_addr;
    bit<16>    ether_type;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<6>  dscp;
    bit<2>  ecn;
    bit<16> len;
    bit<16> identification;
    bit<3>  flags;
    bit<13> frag_offset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdr_checksum;
    bit<32> src_addr;
    bit<32> dst_addr;
}

struct headers_t {
    packet_out_header_t packet_out;
    packet_in_header_t  packet_in;
    ethernet_t          ethernet;
    ipv4_t              ipv4;
}

struct local_metadata_t {
    next_hop_id_t next_hop_id;
}

parser ParserImpl(packet_in packet, out headers_t hdr, inout local_metadata_t local_metadata,
                  inout standard_metadata_t standard_metadata) {
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
        transition select(hdr.ethernet.ether_type) {
            ETH_TYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition accept;
    }
}

control VerifyChecksumImpl(inout headers_t hdr, inout local_metadata_t meta) {
    apply { }
}

control PortCountersControl(inout headers_t hdr, inout local_metadata_t local_metadata,
                            inout standard_metadata_t standard_metadata) {
    counter(MAX_PORTS, CounterType.packets) egress_port_counter;
    counter(MAX_PORTS, CounterType.packets) ingress_port_counter;
    apply {
        if (standard_metadata.egress_spec < MAX_PORTS) {
            egress_port_counter.count((bit<32>)standard_metadata.egress_spec);
        }
        if (standard_metadata.ingress_port < MAX_PORTS) {
            ingress_port_counter.count((bit<32>)standard_metadata.ingress_port);
        }
    }
}

control PacketIoIngressControl(inout headers_t hdr, inout standard_metadata_t standard_metadata) {
    apply {
        if (hdr.packet_out.isValid()) {
            standard_metadata.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            exit;
        }
    }
}

control TableIngressControl(inout headers_t hdr, inout local_metadata_t local_metadata,
                            inout standard_metadata_t standard_metadata) {
    direct_counter(CounterType.packets_and_bytes) table0_counter;
    direct_counter(CounterType.packets) next_hop_counter;

    action send_to_cpu() {
        standard_metadata.egress_spec = CPU_PORT;
    }
    action set_egress_port(port_num_t port) {
        standard_metadata.egress_spec = port;
    }
    action set_next_hop_id(next_hop_id_t next_hop_id) {
        local_metadata.next_hop_id = next_hop_id;
    }
    action _drop() {
        mark_to_drop(standard_metadata);
    }
    table table0 {
        key = {
            standard_metadata.ingress_port : ternary;
            hdr.ethernet.src_addr          : ternary;
            hdr.ethernet.dst_addr          : ternary;
            hdr.ethernet.ether_type        : ternary;
            hdr.ipv4.src_addr              : ternary;
            hdr.ipv4.dst_addr              : ternary;
            hdr.ipv4.protocol              : ternary;
        }
        actions = {
            set_egress_port;
            send_to_cpu;
            set_next_hop_id;
            _drop;
        }
        const default_action = _drop();
        counters = table0_counter;
    }
    table next_hop {
        key = {
            local_metadata.next_hop_id : exact;
        }
        actions = {
            set_egress_port;
            _drop;
        }
        counters = next_hop_counter;
    }
    apply {
        table0.apply();
        if (local_metadata.next_hop_id != 0) {
            next_hop.apply();
        }
    }
}

control IngressImpl(inout headers_t hdr, inout local_metadata_t local_metadata,
                    inout standard_metadata_t standard_metadata) {
    PortCountersControl() port_counters_control;
    PacketIoIngressControl() packet_io_ingress_control;
    TableIngressControl() table_ingress_control;
    apply {
        packet_io_ingress_control.apply(hdr, standard_metadata);
        table_ingress_control.apply(hdr, local_metadata, standard_metadata);
        port_counters_control.apply(hdr, local_metadata, standard_metadata);
    }
}

control EgressImpl(inout headers_t hdr, inout local_metadata_t local_metadata,
                   inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.egress_port == CPU_PORT) {
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = standard_metadata.ingress_port;
            hdr.packet_in._padding = 0;
        }
    }
}

control ComputeChecksumImpl(inout headers_t hdr, inout local_metadata_t meta) {
    apply { }
}

control DeparserImpl(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
    }
}

V1Switch(ParserImpl(), VerifyChecksumImpl(), IngressImpl(), EgressImpl(),
         ComputeChecksumImpl(), DeparserImpl()) main;
