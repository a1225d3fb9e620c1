/* QoS: DSCP -> traffic class -> egress queue (standard_metadata.priority);
 * ECN marking in egress above a per-(port, class) queue depth. */
#ifndef AIZONE_QOS_P4
#define AIZONE_QOS_P4

#include "../header.p4"

/* The class (meta.tc) names the traffic for counters and ECN; the queue
 * (standard_metadata.priority) is where it waits. They are separate tables
 * because the queue count is the target's launch option (BMv2 and p4switch:
 * --priority-queues N; a priority >= N is dropped): until the controller
 * maps classes to queues, everything uses queue 0 and nothing is lost. */
control QosIngress(inout headers_t hdr,
                   inout local_metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    direct_counter(CounterType.packets_and_bytes) dscp_counter;

    action set_tc(tc_t tc) {
        meta.tc = tc;
    }

    /* Ternary, so a range of code points is one entry (priority decides overlaps). */
    table dscp_to_tc {
        key = {
            meta.dscp: ternary @name("dscp");
        }
        actions = { set_tc; @defaultonly NoAction; }
        const default_action = NoAction();
        counters = dscp_counter;
        size = DSCP_TABLE_SIZE;
    }

    action set_queue(bit<3> queue) {
        standard_metadata.priority = queue;
    }

    table tc_to_queue {
        key = {
            meta.tc: exact @name("tc");
        }
        actions = { set_queue; @defaultonly NoAction; }
        const default_action = NoAction();
        size = TC_TABLE_SIZE;
    }

    /* The ACK lane: where an RC ACK/NAK of a class waits, when not in the
     * class's own queue. For targets whose queue rates count packets, not
     * bytes (BMv2's set_queue_rate): there a 60-byte ACK would take a full
     * RoCE frame's slot of the link's rate, and a port that carries data one
     * way and the ACKs of data the other way would run below the link's
     * rate. The ACK keeps its class (meta.tc) for counters, its priority
     * group and PFC holds; only the queue differs. No entry: the class's
     * queue, as on a real port. The order within a QP is kept: an RC
     * responder sends only ACKs/NAKs to its requester here (no READ
     * responses). */
    table ack_queue {
        key = {
            meta.tc: exact @name("tc");
        }
        actions = { set_queue; @defaultonly NoAction; }
        const default_action = NoAction();
        size = TC_TABLE_SIZE;
    }

    /* For IP packets, the controller's packet-outs, received PFC frames and
     * ARP replies (FabricIngress applies it once, for all). */
    apply {
        if (meta.from_cpu || meta.pfc_rx || hdr.arp.isValid()) {
            /* The controller's own frames (link probes) are control traffic, and
             * so is a received PFC frame on its way to where it takes effect, and
             * an ARP reply: left in the lowest queue, a host that asks for its
             * gateway while its downlink carries lossless data waits behind all
             * of it (seconds at the emulated rates), and its job fails to start. */
            meta.tc = TC_CONTROL;
        } else {
            meta.tc = TC_DEFAULT;
            dscp_to_tc.apply();
            /* Control traffic goes first whatever its DSCP: congestion
             * notifications here; the collective library's clear-to-send
             * messages through the DSCP they carry, mapped to TC_CONTROL. */
            if (hdr.bth.isValid() && hdr.bth.opcode == BTH_OPCODE_CNP) {
                meta.tc = TC_CONTROL;
            }
        }
        standard_metadata.priority = 0;
        tc_to_queue.apply();
        if (hdr.bth.isValid() && hdr.bth.opcode == BTH_OPCODE_RC_ACK) {
            ack_queue.apply();
        }
    }
}

control EcnEgress(inout headers_t hdr,
                  inout local_metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    /* Index: egress port * TCS + class. */
    counter(PORT_TC_SLOTS, CounterType.packets) ecn_marked;

    action set_ecn_threshold(bit<19> depth) {
        meta.ecn_threshold = depth;
    }

    /* Per (egress port, class) queue depth in packets: an ECN-capable packet
     * that finds more than `depth` packets queued ahead of it
     * (enq_qdepth > depth) leaves marked Congestion Experienced. No entry:
     * no marking. */
    table ecn_threshold {
        key = {
            standard_metadata.egress_port: exact @name("port");
            meta.tc: exact @name("tc");
        }
        actions = { set_ecn_threshold; @defaultonly NoAction; }
        const default_action = NoAction();
        size = ECN_TABLE_SIZE;
    }

    apply {
        if (ecn_threshold.apply().hit) {
            if (standard_metadata.enq_qdepth > meta.ecn_threshold) {
                bool marked = false;
                if (hdr.ipv4.isValid() && hdr.ipv4.ecn != ECN_NOT_ECT && hdr.ipv4.ecn != ECN_CE) {
                    hdr.ipv4.ecn = ECN_CE;
                    marked = true;
                } else if (hdr.ipv6.isValid() && hdr.ipv6.ecn != ECN_NOT_ECT
                           && hdr.ipv6.ecn != ECN_CE) {
                    hdr.ipv6.ecn = ECN_CE;
                    marked = true;
                }
                if (marked) {
                    ecn_marked.count(((bit<32>) standard_metadata.egress_port) * TCS
                                     + (bit<32>) meta.tc);
                }
            }
        }
    }
}

#endif
