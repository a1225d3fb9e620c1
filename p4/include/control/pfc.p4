/* PFC-like flow control (IEEE 802.1Qbb) in the program, the same on every
 * target: egress honours received PFC frames and sends them.
 *
 * Honouring (PfcEgress, where the queues are). A PFC frame received on
 * port p, for a port the controller enabled (`pfc_honour` in ingress, with
 * the port's time per pause quantum: 512 bit-times at its emulated rate),
 * goes from ingress to the egress of p (in the control class's queue),
 * where it pauses each class c whose class-enable bit is set for quanta x
 * 512 bit-times (quanta 0 resumes): `pause_until[p * 8 + c]`, and ends.
 * A packet of a lossless (egress port, class) (`pfc_hold`) that reaches
 * egress while its class is paused there does not leave: it is held, queued
 * ahead of it or not (a MAC stops its queue, not only what comes after the
 * PAUSE). Egress recirculates it, ingress sends it round to the same port
 * through the port's lowest queue (so that it starves no other class of the
 * port), and egress looks again, until the pause ends; then it leaves from
 * there. Held packets get a place in line (`hold_tail`) and leave in that
 * order (`hold_head`), and a packet of a class that still has a line waits
 * behind it even when the pause is over, so a class leaves in the order it
 * came. v1model has no way to stop a queue (BMv2's queue rate is fixed per
 * packet when it is enqueued), so this loop is the hold; docs/bmv2.md says
 * what it costs.
 *
 * Watchdog (per lossless (port, class), `pfc_hold`'s watchdog_us, 0 off):
 * a class paused without a break for watchdog_us while PAUSE frames keep
 * coming is in a PFC storm (counted in `pfc_storms`): its pause is ignored
 * (held packets leave) until no PAUSE arrived for watchdog_us.
 *
 * Generating (PfcEgress). For a lossless (egress port, class)
 * (`pfc_xoff`: xoff and xon, in packets of `deq_qdepth`, the queue a packet
 * leaves behind it), a packet that leaves a queue of at least xoff packets
 * asserts XOFF for (its ingress port, class): a PFC frame with that
 * class's quanta (`pfc_port` of the ingress port) goes out of the ingress
 * port, again every refresh_us while the queue stays above xon (so the
 * pause never runs out while needed, and one frame covers a burst), and a
 * frame with quanta 0 (XON) when a packet leaves xon packets or fewer. The
 * frame is an E2E clone to the ingress port's clone session
 * (PFC_SESSION_BASE + port), truncated to PFC_FRAME_BYTES, rebuilt into the
 * PFC frame in its own egress pass; its source MAC is `pfc_port`'s for that
 * port. Counted per (port, class) in `pfc_tx` (sent) and `pfc_rx`
 * (received). */
#ifndef AIZONE_PFC_P4
#define AIZONE_PFC_P4

#include "../header.p4"

/* A held packet whose place in line never comes up again (it was lost on
 * its way round: a full queue) is skipped after this long without the line
 * moving, so one loss cannot stop a class for ever. Long against a turn of
 * the loop (a full queue of held packets at the port's rate: 0.6 s at
 * 1 Mb/s), so a slow turn is not taken for a loss and let out of order. */
const bit<48> PFC_HOLD_STALL_US = 2000000;

/* Honour one class of a received PFC frame (macro: v1model targets do not
 * all take register writes under conditions inside actions). */
#define PFC_RX_CLASS(C, TIME) \
    if (hdr.pfc.class_enable[C:C] == 1) { \
        bit<32> slot = base + C; \
        pfc_rx.count(slot); \
        bit<48> until; \
        pause_until.read(until, slot); \
        if (hdr.pfc.TIME == 0) { \
            pause_until.write(slot, now); \
            paused_since.write(slot, 0); \
        } else { \
            bit<64> us = ((bit<64>) hdr.pfc.TIME * (bit<64>) quantum_q16) >> 16; \
            if (until <= now) { \
                paused_since.write(slot, now); \
            } \
            pause_until.write(slot, now + (bit<48>) us); \
            last_pause.write(slot, now); \
        } \
    }

/* Ingress sends a received PFC frame (FabricIngress sets meta.pfc_rx) of a
 * port that honours them to the egress of that port, in the control class's
 * queue: the pause state is egress's, where the queues are. A held packet
 * back from the loop goes round to the port it is held for, in the lowest
 * queue. */
control PfcIngress(inout headers_t hdr,
                   inout local_metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    /* quantum_q16: microseconds per pause quantum (512 bit-times at the
     * port's rate) x 65536, carried to egress with the frame. */
    action honour(bit<32> quantum_q16_us) {
        meta.pfc_quantum_q16 = quantum_q16_us;
    }

    /* Ports whose received PFC frames pause their classes; on any other
     * port a PFC frame is dropped (and counted) as a MAC control frame. */
    table pfc_honour {
        key = {
            standard_metadata.ingress_port: exact @name("port");
        }
        actions = { honour; @defaultonly NoAction; }
        const default_action = NoAction();
        size = PFC_PORT_TABLE_SIZE;
    }

    apply {
        bool recirc = standard_metadata.instance_type == INSTANCE_RECIRC && meta.held;
        if (recirc) {
            /* Round the loop in the lowest queue: strict priority would let a
             * loop in its own queue starve every lower class of the port. */
            standard_metadata.egress_spec = meta.hold_port;
            standard_metadata.priority = 0;
            meta.tc = meta.hold_tc;
            meta.pfc_data = true;
        } else if (meta.pfc_rx) {
            if (pfc_honour.apply().hit) {
                /* Honoured, not dropped: it ends in egress. */
                meta.drop_reason = 0;
                standard_metadata.egress_spec = standard_metadata.ingress_port;
            } else {
                meta.pfc_rx = false;
            }
        } else if (meta.has_next_hop && meta.drop_reason == 0) {
            meta.pfc_data = true;
            meta.hold_port = standard_metadata.egress_spec;
            meta.hold_tc = meta.tc;
            meta.hold_in_port = standard_metadata.ingress_port;
        }
    }
}

control PfcEgress(inout headers_t hdr,
                  inout local_metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    counter(PORT_TC_SLOTS, CounterType.packets) pfc_tx;
    counter(PORT_TC_SLOTS, CounterType.packets) pfc_rx;
    counter(PORT_TC_SLOTS, CounterType.packets) pfc_storms;
    /* Received: index port * TCS + class. Times in microseconds
     * (egress_global_timestamp). */
    register<bit<48>>(PORT_TC_SLOTS) pause_until;
    register<bit<48>>(PORT_TC_SLOTS) paused_since;  /* 0: not paused */
    register<bit<48>>(PORT_TC_SLOTS) last_pause;
    register<bit<1>>(PORT_TC_SLOTS) storm;
    register<bit<32>>(PORT_TC_SLOTS) hold_head;
    register<bit<32>>(PORT_TC_SLOTS) hold_tail;
    register<bit<48>>(PORT_TC_SLOTS) hold_moved;
    /* Sent: XOFF asserted towards (ingress port, class), and when it was last sent. */
    register<bit<1>>(PORT_TC_SLOTS) xoff_on;
    register<bit<48>>(PORT_TC_SLOTS) xoff_at;

    bit<32> quantum_q16 = meta.pfc_quantum_q16;
    bit<32> watchdog_us = 0;
    bit<19> xoff = 0;
    bit<19> xon = 0;
    mac_addr_t src_mac = PFC_DEFAULT_SRC_MAC;
    bit<16> quanta = 0;
    bit<32> refresh_us = 0;
    port_t key_port = 0;

    action hold(bit<32> watchdog) {
        watchdog_us = watchdog;
    }

    /* Lossless (egress port, class): its packets wait while it is paused. */
    table pfc_hold {
        key = {
            standard_metadata.egress_port: exact @name("port");
            meta.tc: exact @name("tc");
        }
        actions = { hold; @defaultonly NoAction; }
        const default_action = NoAction();
        size = PFC_QUEUE_TABLE_SIZE;
    }

    action set_xoff(bit<19> xoff_depth, bit<19> xon_depth) {
        xoff = xoff_depth;
        xon = xon_depth;
    }

    /* Lossless (egress port, class): XOFF at xoff packets queued, XON at xon. */
    table pfc_xoff {
        key = {
            standard_metadata.egress_port: exact @name("port");
            meta.tc: exact @name("tc");
        }
        actions = { set_xoff; @defaultonly NoAction; }
        const default_action = NoAction();
        size = PFC_QUEUE_TABLE_SIZE;
    }

    action set_pfc_port(mac_addr_t mac, bit<16> xoff_quanta, bit<32> refresh) {
        src_mac = mac;
        quanta = xoff_quanta;
        refresh_us = refresh;
    }

    /* PFC frames sent out of a port: source MAC, XOFF quanta, refresh period. */
    table pfc_port {
        key = {
            key_port: exact @name("port");
        }
        actions = { set_pfc_port; @defaultonly NoAction; }
        const default_action = NoAction();
        size = PFC_PORT_TABLE_SIZE;
    }

    apply {
        bit<48> now = standard_metadata.egress_global_timestamp;
        bool frame = standard_metadata.instance_type == INSTANCE_EGRESS_CLONE && meta.pfc_frame;
        /* Each table once (BMv2 places a table once in its pipeline graph). */
        bool lossless = false;
        if (frame) {
            key_port = standard_metadata.egress_port;
        } else if (meta.pfc_data && !meta.pfc_rx) {
            key_port = meta.hold_in_port;
            lossless = pfc_xoff.apply().hit;
        }
        bool port_set = false;
        if (frame || lossless) {
            port_set = pfc_port.apply().hit;
        }
        if (meta.pfc_rx) {
            /* A PFC frame received on this port (honoured: PfcIngress): it pauses
             * this port's classes, and ends here. */
            bit<32> base = ((bit<32>) standard_metadata.egress_port) * TCS;
            PFC_RX_CLASS(0, time0)
            PFC_RX_CLASS(1, time1)
            PFC_RX_CLASS(2, time2)
            PFC_RX_CLASS(3, time3)
            PFC_RX_CLASS(4, time4)
            PFC_RX_CLASS(5, time5)
            PFC_RX_CLASS(6, time6)
            PFC_RX_CLASS(7, time7)
            mark_to_drop(standard_metadata);
        } else if (frame) {
            /* The clone becomes the PFC frame (its truncation drops the rest). */
            hdr.packet_in.setInvalid();
            hdr.arp.setInvalid();
            hdr.ipv4.setInvalid();
            hdr.ipv6.setInvalid();
            hdr.udp.setInvalid();
            hdr.tcp.setInvalid();
            hdr.bth.setInvalid();
            hdr.ethernet.setValid();
            hdr.ethernet.dst_addr = PFC_DST_MAC;
            hdr.ethernet.src_addr = src_mac;
            hdr.ethernet.ether_type = ETHERTYPE_MAC_CONTROL;
            hdr.pfc.setValid();
            hdr.pfc.opcode = MAC_CONTROL_OPCODE_PFC;
            hdr.pfc.class_enable = ((bit<16>) 1) << meta.pfc_class;
            hdr.pfc.time0 = meta.pfc_class == 0 ? meta.pfc_quanta : 0;
            hdr.pfc.time1 = meta.pfc_class == 1 ? meta.pfc_quanta : 0;
            hdr.pfc.time2 = meta.pfc_class == 2 ? meta.pfc_quanta : 0;
            hdr.pfc.time3 = meta.pfc_class == 3 ? meta.pfc_quanta : 0;
            hdr.pfc.time4 = meta.pfc_class == 4 ? meta.pfc_quanta : 0;
            hdr.pfc.time5 = meta.pfc_class == 5 ? meta.pfc_quanta : 0;
            hdr.pfc.time6 = meta.pfc_class == 6 ? meta.pfc_quanta : 0;
            hdr.pfc.time7 = meta.pfc_class == 7 ? meta.pfc_quanta : 0;
            hdr.pfc_pad.setValid();
            hdr.pfc_pad.zero = 0;
            truncate(PFC_FRAME_BYTES);
            pfc_tx.count(((bit<32>) standard_metadata.egress_port) * TCS + (bit<32>) meta.pfc_class);
        } else if (meta.pfc_data) {
            /* Sending: the queue this packet leaves behind asserts XOFF towards
             * its ingress port, refreshes it, or releases it. */
            if (lossless && port_set) {
                bit<32> slot = ((bit<32>) meta.hold_in_port) * TCS + (bit<32>) meta.tc;
                bit<1> on;
                bit<48> at;
                xoff_on.read(on, slot);
                xoff_at.read(at, slot);
                bit<19> depth = standard_metadata.deq_qdepth;
                bool send = false;
                if (depth >= xoff && on == 0) {
                    send = true;
                } else if (on == 1 && depth > xon && now - at >= (bit<48>) refresh_us) {
                    send = true;  /* refresh before the last one runs out */
                } else if (on == 1 && depth <= xon) {
                    send = true;
                    quanta = 0;  /* XON */
                }
                if (send) {
                    xoff_on.write(slot, quanta == 0 ? 1w0 : 1w1);
                    xoff_at.write(slot, now);
                    meta.pfc_frame = true;
                    meta.pfc_class = meta.tc;
                    meta.pfc_quanta = quanta;
                    clone_preserving_field_list(CloneType.E2E,
                        PFC_SESSION_BASE + (bit<32>) meta.hold_in_port, FL_PFC_FRAME);
                }
            }
            /* Honouring: a packet of a paused lossless (port, class) does not
             * leave; it is held, and leaves from here when its turn comes. */
            if (pfc_hold.apply().hit) {
                bit<32> slot = ((bit<32>) standard_metadata.egress_port) * TCS + (bit<32>) meta.tc;
                bit<48> until;
                bit<48> since;
                bit<48> last;
                bit<1> in_storm;
                bit<32> head;
                bit<32> tail;
                bit<48> moved;
                pause_until.read(until, slot);
                paused_since.read(since, slot);
                last_pause.read(last, slot);
                storm.read(in_storm, slot);
                hold_head.read(head, slot);
                hold_tail.read(tail, slot);
                hold_moved.read(moved, slot);
                bool paused = until > now;
                if (watchdog_us != 0) {
                    bit<48> wd = (bit<48>) watchdog_us;
                    if (in_storm == 1 && now - last >= wd) {
                        /* No PAUSE for a watchdog period: the storm is over. */
                        in_storm = 0;
                        storm.write(slot, 0);
                        if (paused) {
                            paused_since.write(slot, now);
                        }
                    } else if (in_storm == 0 && paused && since != 0 && now - since >= wd
                               && now - last < wd) {
                        in_storm = 1;
                        storm.write(slot, 1);
                        pfc_storms.count(slot);
                    }
                    if (in_storm == 1) {
                        paused = false;
                    }
                }
                if (!meta.held) {
                    if (paused || head != tail) {
                        /* Paused, or older packets of the class still held: in line. */
                        meta.held = true;
                        meta.hold_seq = tail;
                        hold_tail.write(slot, tail + 1);
                        if (head == tail) {
                            hold_moved.write(slot, now);
                        }
                    }
                } else if (paused) {
                    hold_moved.write(slot, now);  /* the line is not stuck, only paused */
                } else if (meta.hold_seq == head || head - meta.hold_seq < 0x80000000
                           || now - moved >= PFC_HOLD_STALL_US) {
                    /* Its turn (or it was skipped, or the line is stuck): it leaves. */
                    meta.held = false;
                    if (meta.hold_seq - head < 0x80000000) {
                        hold_head.write(slot, meta.hold_seq + 1);
                    }
                    hold_moved.write(slot, now);
                }
            } else {
                meta.held = false;  /* the class is not (or no longer) lossless: it leaves */
            }
            if (meta.held) {
                /* Round the loop again (PfcIngress sends it back here). */
                meta.recirculating = true;
                recirculate_preserving_field_list(FL_PFC_HOLD);
            }
        }
    }
}

#endif
