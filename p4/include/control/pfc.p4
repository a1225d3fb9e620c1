/* PFC-like flow control (IEEE 802.1Qbb) in the program, the same on every
 * target: ingress accounts each priority group's bytes and asserts XOFF,
 * egress refreshes and releases it, and honours received PFC frames.
 *
 * Generating: priority groups counted in bytes, as 802.1Qbb switches do.
 * A priority group (PG) is (ingress port, class). For a lossless PG
 * (`pfc_xoff` in ingress: xoff_bytes, xon_bytes) every data packet admitted
 * on its first pass counts its bytes in (`pg_in[port * 8 + class]`), and
 * the same bytes are counted out (`pg_out`) when it finally leaves egress
 * (not on a pass that holds it). So the count is what that port sent in that class that is
 * still in the switch, whichever egress queues it waits in.
 *  - XOFF: an admission that brings the PG to xoff_bytes or more while XOFF
 *    is not asserted sends a PFC frame for the class out of the ingress
 *    port at once (an I2E clone to its session), with the port's quanta.
 *  - Refresh: while asserted and above xon_bytes, a pass in egress of one of
 *    the PG's packets re-sends it when refresh_us has gone by (an E2E
 *    clone), so the pause never runs out while it is needed and one frame
 *    covers a burst.
 *  - XON: the departure that brings the PG to xon_bytes or less sends quanta
 *    0 at once. Because only the port's own packets lower its count, XON
 *    comes as soon as that port's backlog has drained, whatever other ports
 *    keep in the same queue (the queue-depth rule this replaces waited for a
 *    packet of the paused port to leave a short queue: once the port was
 *    paused none came, and the pause ran out its full time).
 * Quanta and refresh are the port's (`pfc_port`, the controller's
 * `pfc_quanta`): the pause lasts twice the time the port's link takes to
 * carry the PG's XOFF threshold and headroom, and is refreshed at half of
 * it, as switches refresh at about half the pause: a refresh late by up to
 * half a pause still lands before the upstream resumes, and a lost XON
 * costs at most one pause.
 * One writer: BMv2 runs its ingress thread and its egress threads at the
 * same time, and a count both sides read, changed and wrote could lose an
 * update whenever the two interleave. So each register has one writer: ingress
 * counts bytes in (`pg_in`) and XOFFs asserted (`pg_xoffs`), egress bytes
 * out (`pg_out`) and the XOFF count it last released (`pg_xons`); the PG
 * holds pg_in - pg_out bytes and XOFF stands while pg_xoffs != pg_xons.
 * BMv2 has one ingress thread; its egress threads (one per group of ports)
 * can still both count out the same PG's bytes at once, from two egress
 * ports, and lose one: that is drift, below.
 * Drift: the count is high by the bytes of any counted packet that never
 * left (a queue tail-dropped it: lossless queues are deeper than XOFF plus
 * headroom, so that is a misconfiguration; a held packet lost on its way
 * round the loop; two egress threads counting out at once). It is bounded
 * in time: when a PG has had bytes outstanding for PFC_PG_IDLE_US and none
 * of its packets was seen in egress meanwhile, nothing of it is left in the
 * switch, and its next admission starts it from zero again (counted in
 * `pg_resyncs`). A PG read below zero is empty.
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
 * came. A packet whose pause is over that is not yet at its turn goes round
 * the port's drain lane instead (`pfc_drain`, a queue the controller names,
 * paced faster than the port): packets that joined the line during the
 * pause went round between older ones, so the line is not in order in the
 * loop and empties in several turns; in the paced loop each turn takes the
 * line's length at the port's rate, in the drain lane a fraction of it. No
 * entry: the lowest queue, as during the pause. v1model has no way to stop a
 * queue (BMv2's queue rate is fixed per packet when it is enqueued), so this
 * loop is the hold; docs/bmv2.md says what it costs.
 *
 * Watchdog (per lossless (port, class), `pfc_hold`'s watchdog_us, 0 off):
 * a class paused without a break for watchdog_us while PAUSE frames keep
 * coming is in a PFC storm (counted in `pfc_storms`): its pause is ignored
 * (held packets leave) until no PAUSE arrived for watchdog_us.
 *
 * The frame: the clone (to session PFC_SESSION_BASE + port) is rebuilt into
 * the PFC frame in its own egress pass and truncated to PFC_FRAME_BYTES;
 * its source MAC is `pfc_port`'s for that port. Counted per (port, class)
 * in `pfc_tx` (sent) and `pfc_rx` (received). */
#ifndef AIZONE_PFC_P4
#define AIZONE_PFC_P4

#include "../header.p4"

/* A held packet whose place in line never comes up again (it was lost on
 * its way round: a full queue) is skipped after this long without the line
 * moving, so one loss cannot stop a class for ever. Long against a turn of
 * the loop (a full queue of held packets at the port's rate: 0.6 s at
 * 1 Mb/s), so a slow turn is not taken for a loss and let out of order. */
const bit<48> PFC_HOLD_STALL_US = 2000000;

/* A PG with bytes outstanding none of whose packets reached egress for this
 * long has nothing left in the switch: what it still counts was lost (see
 * "Drift" above) and its next admission starts from zero. Long against the
 * widest gap between two of a backlogged PG's packets in egress (a queue of
 * other ports' frames between them: 128 RoCE frames take 0.11 s at
 * 10 Mb/s, 1.1 s at 1 Mb/s), so live bytes are never forgotten. */
const bit<48> PFC_PG_IDLE_US = 5000000;

/* Priority-group state, index ingress port * TCS + class. Every register is
 * written by one side only, ingress or egress (see "One writer" above):
 * the PG holds pg_in - pg_out bytes (mod 2^32), XOFF is asserted while
 * pg_xoffs != pg_xons. */
register<bit<32>>(PORT_TC_SLOTS) pg_in;          /* ingress: bytes admitted, ever */
register<bit<48>>(PORT_TC_SLOTS) pg_first;       /* ingress: when it last rose from empty */
register<bit<32>>(PORT_TC_SLOTS) pg_xoffs;       /* ingress: XOFFs asserted, ever */
register<bit<48>>(PORT_TC_SLOTS) pg_xoff_at;     /* ingress: when the last XOFF was sent */
register<bit<32>>(PORT_TC_SLOTS) pg_out;         /* egress: bytes that left, ever */
register<bit<48>>(PORT_TC_SLOTS) pg_seen;        /* egress: its last packet in egress */
register<bit<32>>(PORT_TC_SLOTS) pg_xons;        /* egress: pg_xoffs when XON was last sent */
register<bit<48>>(PORT_TC_SLOTS) pg_refresh_at;  /* egress: when the last refresh was sent */

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
 * queue. A routed data packet of a lossless PG is counted, and may assert
 * XOFF towards its ingress port. */
control PfcIngress(inout headers_t hdr,
                   inout local_metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    counter(PORT_TC_SLOTS, CounterType.packets) pg_resyncs;
    /* Passes of held packets through a port's drain lane, per (port, class). */
    counter(PORT_TC_SLOTS, CounterType.packets) drain_passes;

    bit<32> xoff_level = 0;
    bit<32> xon_level = 0;
    bool resynced = false;
    bool send_xoff = false;

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

    action set_xoff(bit<32> xoff_bytes, bit<32> xon_bytes) {
        xoff_level = xoff_bytes;
        xon_level = xon_bytes;
    }

    /* Lossless PGs (ingress port, class): XOFF at xoff_bytes, XON at xon_bytes. */
    table pfc_xoff {
        key = {
            standard_metadata.ingress_port: exact @name("port");
            meta.tc: exact @name("tc");
        }
        actions = { set_xoff; @defaultonly NoAction; }
        const default_action = NoAction();
        size = PFC_QUEUE_TABLE_SIZE;
    }

    /* One admission (see "One writer" above): forget a stale count, add the
     * packet, assert XOFF at the threshold. */
    action pg_admit(bit<32> slot, bit<32> len, bit<48> now) {
        bit<32> bytes_in;
        bit<32> bytes_out;
        bit<48> first;
        bit<48> seen;
        bit<32> xoffs;
        bit<32> xons;
        bit<48> at;
        pg_in.read(bytes_in, slot);
        pg_out.read(bytes_out, slot);
        pg_first.read(first, slot);
        pg_seen.read(seen, slot);
        pg_xoffs.read(xoffs, slot);
        pg_xons.read(xons, slot);
        pg_xoff_at.read(at, slot);
        /* `seen` may be later than `now`: egress stamps it, and a packet's
         * ingress timestamp is taken when it arrived, before it waited for
         * the ingress pipeline. */
        bit<48> last = first > seen ? first : seen;
        bool stale = bytes_in != bytes_out && now > last && now - last >= PFC_PG_IDLE_US;
        resynced = stale;
        bytes_in = stale ? bytes_out : bytes_in;
        pg_first.write(slot, bytes_in == bytes_out ? now : first);
        bytes_in = bytes_in + len;
        pg_in.write(slot, bytes_in);
        bool send = bytes_in - bytes_out >= xoff_level && xoffs == xons;
        send_xoff = send;
        pg_xoffs.write(slot, send ? xoffs + 1 : xoffs);
        pg_xoff_at.write(slot, send ? now : at);
    }

    action drain_via(bit<3> queue) {
        standard_metadata.priority = queue;
    }

    /* The drain lane of a port: the queue a held packet whose pause is over
     * goes round while it waits for its turn. */
    table pfc_drain {
        key = {
            meta.hold_port: exact @name("port");
        }
        actions = { drain_via; @defaultonly NoAction; }
        const default_action = NoAction();
        size = PFC_PORT_TABLE_SIZE;
    }

    apply {
        bool recirc = standard_metadata.instance_type == INSTANCE_RECIRC && meta.held;
        if (recirc) {
            /* Round the loop in the lowest queue while paused: strict priority
             * would let a loop in its own queue starve every lower class of
             * the port. Past the pause, in the port's drain lane. */
            standard_metadata.egress_spec = meta.hold_port;
            standard_metadata.priority = 0;
            if (meta.hold_drain) {
                if (pfc_drain.apply().hit) {
                    drain_passes.count(((bit<32>) meta.hold_port) * TCS + (bit<32>) meta.hold_tc);
                }
            }
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
            if (pfc_xoff.apply().hit) {
                bit<32> slot = ((bit<32>) standard_metadata.ingress_port) * TCS + (bit<32>) meta.tc;
                meta.pg_counted = true;
                meta.pg_len = standard_metadata.packet_length;
                meta.pg_xon = xon_level;
                pg_admit(slot, standard_metadata.packet_length,
                         standard_metadata.ingress_global_timestamp);
                if (resynced) {
                    pg_resyncs.count(slot);
                }
                if (send_xoff) {
                    /* Out of the ingress port now, not when this packet
                     * reaches egress behind the queue that is filling. */
                    meta.pfc_frame = true;
                    meta.pfc_class = meta.tc;
                    meta.pfc_resume = false;
                    clone_preserving_field_list(CloneType.I2E,
                        PFC_SESSION_BASE + (bit<32>) standard_metadata.ingress_port,
                        FL_PFC_FRAME);
                }
            }
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

    bit<32> quantum_q16 = meta.pfc_quantum_q16;
    bit<32> watchdog_us = 0;
    mac_addr_t src_mac = PFC_DEFAULT_SRC_MAC;
    bit<16> quanta = 0;
    bit<32> refresh_us = 0;
    port_t key_port = 0;
    bool send_xon = false;
    bool send_refresh = false;

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

    /* A pass of a counted packet (see "One writer" above): a departure (`len`
     * bytes; 0 on a pass that holds it) counts its bytes out; then XON if
     * that leaves the PG at xon_bytes or less, else a refresh when one is due. */
    action pg_pass(bit<32> slot, bit<32> len, bit<32> xon_bytes, bit<48> now,
                   bit<48> refresh) {
        bit<32> bytes_in;
        bit<32> bytes_out;
        bit<32> xoffs;
        bit<32> xons;
        bit<48> xoff_at;
        bit<48> refresh_at;
        pg_in.read(bytes_in, slot);
        pg_out.read(bytes_out, slot);
        pg_xoffs.read(xoffs, slot);
        pg_xons.read(xons, slot);
        pg_xoff_at.read(xoff_at, slot);
        pg_refresh_at.read(refresh_at, slot);
        bytes_out = bytes_out + len;
        pg_out.write(slot, bytes_out);
        pg_seen.write(slot, now);
        /* Above 2^31: out passed in (a resync forgot bytes still queued): empty. */
        bit<32> held_bytes = bytes_in - bytes_out;
        held_bytes = held_bytes < 0x80000000 ? held_bytes : 32w0;
        bit<48> last = xoff_at > refresh_at ? xoff_at : refresh_at;
        bool on = xoffs != xons;
        bool xon = on && held_bytes <= xon_bytes;
        bool again = on && !xon && now > last && now - last >= refresh;
        send_xon = xon;
        send_refresh = again;
        pg_xons.write(slot, xon ? xoffs : xons);
        pg_refresh_at.write(slot, again ? now : refresh_at);
    }

    apply {
        bit<48> now = standard_metadata.egress_global_timestamp;
        bool frame = meta.pfc_frame
            && (standard_metadata.instance_type == INSTANCE_EGRESS_CLONE
                || standard_metadata.instance_type == INSTANCE_INGRESS_CLONE);
        /* Each table once (BMv2 places a table once in its pipeline graph). */
        bool counted = !frame && meta.pfc_data && !meta.pfc_rx && meta.pg_counted;
        if (frame) {
            key_port = standard_metadata.egress_port;
        } else if (counted) {
            key_port = meta.hold_in_port;
        }
        bool port_set = false;
        if (frame || counted) {
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
            bit<16> q = meta.pfc_resume ? 16w0 : quanta;
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
            hdr.pfc.time0 = meta.pfc_class == 0 ? q : 0;
            hdr.pfc.time1 = meta.pfc_class == 1 ? q : 0;
            hdr.pfc.time2 = meta.pfc_class == 2 ? q : 0;
            hdr.pfc.time3 = meta.pfc_class == 3 ? q : 0;
            hdr.pfc.time4 = meta.pfc_class == 4 ? q : 0;
            hdr.pfc.time5 = meta.pfc_class == 5 ? q : 0;
            hdr.pfc.time6 = meta.pfc_class == 6 ? q : 0;
            hdr.pfc.time7 = meta.pfc_class == 7 ? q : 0;
            hdr.pfc_pad.setValid();
            hdr.pfc_pad.zero = 0;
            truncate(PFC_FRAME_BYTES);
            pfc_tx.count(((bit<32>) standard_metadata.egress_port) * TCS + (bit<32>) meta.pfc_class);
        } else if (meta.pfc_data) {
            /* Honouring: a packet of a paused lossless (port, class) does not
             * leave; it is held, and leaves from here when its turn comes. */
            bool drain = false;
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
                drain = !paused;
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
            if (counted) {
                /* Generating: this pass of one of the PG's packets takes its
                 * bytes off if it leaves, and releases or refreshes XOFF. */
                bit<32> slot = ((bit<32>) meta.hold_in_port) * TCS + (bit<32>) meta.hold_tc;
                pg_pass(slot, meta.held ? 32w0 : meta.pg_len, meta.pg_xon, now,
                        (bit<48>) refresh_us);
                if (!meta.held) {
                    meta.pg_counted = false;  /* left: counted off once */
                }
                if (port_set && (send_xon || send_refresh)) {
                    meta.pfc_frame = true;
                    meta.pfc_class = meta.hold_tc;
                    meta.pfc_resume = send_xon;
                    clone_preserving_field_list(CloneType.E2E,
                        PFC_SESSION_BASE + (bit<32>) meta.hold_in_port, FL_PFC_FRAME);
                }
            }
            if (meta.held) {
                /* Round the loop again (PfcIngress sends it back here). */
                meta.hold_drain = drain;
                meta.recirculating = true;
                recirculate_preserving_field_list(FL_PFC_HOLD);
            }
        }
    }
}

#endif
