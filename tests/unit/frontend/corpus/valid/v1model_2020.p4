/* v1model_2020: the newer v1model API (V1MODEL_VERSION 20200408): counters,
 * meters and registers with an explicit index type, PortId_t ports. */
#include <core.p4>
#define V1MODEL_VERSION 20200408
#include <v1model.p4>

typedef bit<8> flow_idx_t;

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct metadata {
    flow_idx_t idx;
    bit<32>    bytes;
    bit<2>     color;
}

struct headers {
    ethernet_t ethernet;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    counter<flow_idx_t>(256, CounterType.packets_and_bytes) flow_counter;
    meter<PortId_t>(512, MeterType.bytes) port_meter;
    register<bit<32>, flow_idx_t>(256) flow_bytes;

    action set_idx(flow_idx_t idx, PortId_t port) {
        meta.idx = idx;
        standard_metadata.egress_spec = port;
    }
    table flows {
        key = { hdr.ethernet.srcAddr: exact; }
        actions = { set_idx; NoAction; }
        default_action = NoAction();
    }
    apply {
        flows.apply();
        flow_counter.count(meta.idx);
        port_meter.execute_meter(standard_metadata.ingress_port, meta.color);
        flow_bytes.read(meta.bytes, meta.idx);
        flow_bytes.write(meta.idx, meta.bytes + standard_metadata.packet_length);
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
