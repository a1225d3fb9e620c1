/* Load and drop counters the controller reads: per port, per (port, class), per drop reason. */
#ifndef AIZONE_COUNTERS_P4
#define AIZONE_COUNTERS_P4

#include "../header.p4"

/* Last in ingress: counts what arrived, and drops (counted by reason) what
 * an earlier control refused. (port, class) cells are at port * TCS + tc. */
control IngressCounters(inout headers_t hdr,
                        inout local_metadata_t meta,
                        inout standard_metadata_t standard_metadata) {
    counter(PORTS, CounterType.packets_and_bytes) rx_port;
    counter(PORT_TC_SLOTS, CounterType.packets_and_bytes) rx_port_tc;
    counter(DROP_REASONS, CounterType.packets_and_bytes) drops;

    apply {
        rx_port.count((bit<32>) standard_metadata.ingress_port);
        rx_port_tc.count(((bit<32>) standard_metadata.ingress_port) * TCS + (bit<32>) meta.tc);
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
    counter(PORT_TC_SLOTS, CounterType.packets_and_bytes) tx_port_tc;

    apply {
        tx_port.count((bit<32>) standard_metadata.egress_port);
        tx_port_tc.count(((bit<32>) standard_metadata.egress_port) * TCS + (bit<32>) meta.tc);
    }
}

#endif
