/* A program that loops for as long as the controller lets it: a frame whose
 * EtherType has an entry in `loops` is resubmitted (`resubmit_again`) or
 * recirculated (`recirculate_again`) on every pass; any other frame, and a
 * looping one once its entry is gone, goes out of port 3. `passes` counts
 * ingress passes. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct metadata_t {
    bit<1> recirculate;  /* not kept: each pass asks the table again */
    @field_list(0)
    bit<8> kept;         /* what the field list keeps (nothing the program reads) */
}

struct headers_t {
    ethernet_t ethernet;
}

parser LoopParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control LoopVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control LoopIngress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    counter(1, CounterType.packets) passes;

    action resubmit_again() {
        resubmit_preserving_field_list(0);
    }
    action recirculate_again() {
        meta.recirculate = 1;
    }
    table loops {
        key = { hdr.ethernet.etherType: exact; }
        actions = { resubmit_again; recirculate_again; NoAction; }
        default_action = NoAction();
    }
    apply {
        passes.count(0);
        standard_metadata.egress_spec = 3;
        loops.apply();
    }
}

control LoopEgress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    apply {
        if (meta.recirculate == 1) {
            recirculate_preserving_field_list(0);
        }
    }
}

control LoopComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control LoopDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
    }
}

V1Switch(LoopParser(), LoopVerifyChecksum(), LoopIngress(), LoopEgress(), LoopComputeChecksum(),
         LoopDeparser()) main;
