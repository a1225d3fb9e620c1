/* cpu_struct.p4: controller headers holding a struct of bit fields (P4-16
 * allows one in a header). P4Info lists each of the struct's fields as a
 * metadata of its own, named by its path (`port.egress`), and PacketOut /
 * PacketIn carry them: a PacketOut leaves on `port.egress`; a frame from any
 * other port goes to the CPU with `port.ingress` set. */
#include <core.p4>
#include <v1model.p4>

#define CPU_PORT 255

struct egress_pick_t {
    bit<9> egress;
    bit<7> pad;
}

struct ingress_seen_t {
    bit<7> pad;
    bit<9> ingress;
}

@controller_header("packet_out")
header packet_out_t {
    bit<8>        kind;
    egress_pick_t port;
}

@controller_header("packet_in")
header packet_in_t {
    ingress_seen_t port;
    bit<8>         reason;
}

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> type;
}

struct headers_t {
    packet_out_t packet_out;
    packet_in_t  packet_in;
    ethernet_t   ethernet;
}

struct metadata_t { }

parser MyParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
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
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        if (hdr.packet_out.isValid()) {
            standard_metadata.egress_spec = hdr.packet_out.port.egress;
            hdr.packet_out.setInvalid();
        } else {
            hdr.packet_in.setValid();
            hdr.packet_in.port.pad = 0;
            hdr.packet_in.port.ingress = standard_metadata.ingress_port;
            hdr.packet_in.reason = 7;
            standard_metadata.egress_spec = CPU_PORT;
        }
    }
}

control MyEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

control MyComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MyDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
