/* Load and drop counters the controller reads: per port, per (port, class), per drop reason. */
#ifndef AIZONE_COUNTERS_P4
#define AIZONE_COUNTERS_P4

#include "../header.p4"

control IngressCounters(inout headers_t hdr,
                        inout local_metadata_t meta,
                        inout standard_metadata_t standard_metadata) {
    counter(PORTS, CounterType.packets_and_bytes) rx_port;
    counter(DROP_REASONS, CounterType.packets_and_bytes) drops;

    apply {
        rx_port.count((bit<32>) standard_metadata.ingress_port);
        if (meta.drop_reason != 0) {
            drops.count((bit<32>) meta.drop_reason);
            mark_to_drop(standard_metadata);
        }
    }
}

control EgressCounters(inout headers_t hdr,
                       inout local_metadata_t meta,
                       inout standard_metadata_t standard_metadata) {
    counter(PORTS, CounterType.packets_and_bytes) tx_port;
    /* Index: egress port * 8 + traffic class. */
    counter(PORT_TC_SLOTS, CounterType.packets_and_bytes) tx_port_tc;

    apply {
        tx_port.count((bit<32>) standard_metadata.egress_port);
        tx_port_tc.count(((bit<32>) standard_metadata.egress_port) * 8 + (bit<32>) meta.tc);
    }
}

#endif
