/* meters: an indexed meter array (execute_meter) and a direct meter read in
 * the table's action; red packets are dropped by a filter table. */
#include <core.p4>
#include <v1model.p4>

typedef bit<48> macAddr_t;

header ethernet_t {
    macAddr_t dstAddr;
    macAddr_t srcAddr;
    bit<16>   etherType;
}

struct metadata {
    bit<32> meter_tag;
    bit<2>  color;
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
    meter(32w16384, MeterType.packets) my_meter;
    direct_meter<bit<32>>(MeterType.bytes) src_meter;

    action drop() {
        mark_to_drop(standard_metadata);
    }
    action m_action(bit<32> meter_idx) {
        my_meter.execute_meter<bit<32>>(meter_idx, meta.meter_tag);
        standard_metadata.egress_spec = 1;
    }
    action set_tag() {
        src_meter.read(meta.meter_tag);
    }
    action color_meter(bit<32> idx) {
        my_meter.execute_meter(idx, meta.color);
    }
    table m_table {
        key = {
            hdr.ethernet.srcAddr: exact;
        }
        actions = {
            m_action;
            color_meter;
            NoAction;
        }
        default_action = NoAction;
        size = 16384;
    }
    table m_read {
        key = {
            hdr.ethernet.srcAddr: exact;
        }
        actions = {
            set_tag;
            NoAction;
        }
        default_action = NoAction;
        meters = src_meter;
        size = 16384;
    }
    table m_filter {
        key = {
            meta.meter_tag: exact;
        }
        actions = {
            drop;
            NoAction;
        }
        default_action = drop;
        size = 16;
    }
    apply {
        m_table.apply();
        m_read.apply();
        if (meta.color == V1MODEL_METER_COLOR_RED) {
            drop();
        }
        m_filter.apply();
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
