/* Load and drop counters the controller reads: per port, per (port, class), per drop reason;
 * queue depths per (egress port, class). */
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

/* tx per port and (port, class); and per (port, class) the queue depth each
 * packet found when it was enqueued (enq_qdepth: packets queued ahead of
 * it, in its queue on p4switch, in the port's queues on BMv2):
 * queue_depth holds the last packet's, queue_peak the largest since the
 * controller last wrote the cell to 0 (it reads and clears it per poll).
 * Registers, not counters: a depth is a level, not a sum. */
control EgressCounters(inout headers_t hdr,
                       inout local_metadata_t meta,
                       inout standard_metadata_t standard_metadata) {
    counter(PORTS, CounterType.packets_and_bytes) tx_port;
    counter(PORT_TC_SLOTS, CounterType.packets_and_bytes) tx_port_tc;
    register<bit<32>>(PORT_TC_SLOTS) queue_depth;
    register<bit<32>>(PORT_TC_SLOTS) queue_peak;

    apply {
        bit<32> slot = ((bit<32>) standard_metadata.egress_port) * TCS + (bit<32>) meta.tc;
        tx_port.count((bit<32>) standard_metadata.egress_port);
        tx_port_tc.count(slot);
        bit<32> depth = (bit<32>) standard_metadata.enq_qdepth;
        queue_depth.write(slot, depth);
        bit<32> peak;
        queue_peak.read(peak, slot);
        if (depth > peak) {
            queue_peak.write(slot, depth);
        }
    }
}

#endif
