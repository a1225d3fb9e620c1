/* aizone fabric: the one program every switch role runs, built per role by
 * profile defines (SD-Fabric's fabric.p4 way), so the roles cannot drift
 * apart. The role programs (p4/rtsw.p4, ctsw.p4, atsw.p4) are a profile
 * and an include of this file.
 *
 * Profiles:
 *   WITH_ARP_RESPONDER  answer ARP requests for the switch's gateway
 *                       addresses (FabricIngress.arp, RTSW: hosts attach);
 *                       without it ARP is dropped as DROP_NOT_IP.
 *
 * Ingress: a packet-out goes out of the port it names, in the control
 * class; anything else passes the admission checks and the ACL, then is
 * answered (ARP) or routed (IPv4 / IPv6: mode and salt, ECMP key, LPM,
 * next hop); IP packets and packet-outs get a class and a queue; counters
 * last. Egress: ECN marking, tx counters and queue depths, packet-in
 * header towards the CPU port. */
#ifndef AIZONE_FABRIC_P4
#define AIZONE_FABRIC_P4

#include <core.p4>
#include <v1model.p4>

#include "define.p4"
#include "header.p4"
#include "parser.p4"
#include "control/checks.p4"
#include "control/packet_io.p4"
#include "control/acl.p4"
#include "control/config.p4"
#ifdef WITH_ARP_RESPONDER
#include "control/arp.p4"
#endif
#include "control/qos.p4"
#include "control/hashing.p4"
#include "control/routing.p4"
#include "control/counters.p4"
#include "control/pfc.p4"

control FabricIngress(inout headers_t hdr,
                      inout local_metadata_t meta,
                      inout standard_metadata_t standard_metadata) {
    IngressChecks() checks;
    PacketIoIngress() packet_io;
    Acl() acl;
    SwitchConfig() config;
#ifdef WITH_ARP_RESPONDER
    ArpResponder() arp;
#endif
    QosIngress() qos;
    EcmpHash() hashing;
    Routing() routing;
    IngressCounters() counters;
    PfcIngress() pfc;

    apply {
        /* An IP packet on its way to routing (dropped there or not, it is
         * classified, so that the per-class counters see it). */
        bool ip = false;
        /* An ARP reply the switch answers: network control, like the probes. */
        bool arp_reply = false;
        /* A packet PFC holds, back from its loop: only PFC looks at it again. */
        bool held = standard_metadata.instance_type == INSTANCE_RECIRC && meta.held;
        if (held) {
            /* nothing: routed on its first pass */
        } else if (hdr.packet_out.isValid()) {
            packet_io.apply(hdr, meta, standard_metadata);
        } else {
            checks.apply(hdr, meta, standard_metadata);
            if (meta.drop_reason == 0) {
                acl.apply(hdr, meta, standard_metadata);
            }
            if (meta.drop_reason == 0 && !meta.punted) {
#ifdef WITH_ARP_RESPONDER
                if (hdr.arp.isValid()) {
                    arp.apply(hdr, meta, standard_metadata);
                    arp_reply = meta.drop_reason == 0;
                } else
#endif
                if (hdr.ipv4.isValid() || hdr.ipv6.isValid()) {
                    ip = true;
                    config.apply(hdr, meta);
                    hashing.apply(hdr, meta);
                    routing.apply(hdr, meta, standard_metadata);
                } else {
                    meta.drop_reason = DROP_NOT_IP;
                }
            }
        }
        /* A received PFC frame goes to egress (control/pfc.p4). */
        meta.pfc_rx = !held && hdr.pfc.isValid() && meta.drop_reason == DROP_PFC_FRAME;
        /* One application for every kind: a table has one place in BMv2's
         * pipeline graph. */
        if (ip || arp_reply || meta.from_cpu || meta.pfc_rx) {
            qos.apply(hdr, meta, standard_metadata);
        }
        pfc.apply(hdr, meta, standard_metadata);
        if (!held) {
            counters.apply(hdr, meta, standard_metadata);
        }
    }
}

control FabricEgress(inout headers_t hdr,
                     inout local_metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    EcnEgress() ecn;
    EgressCounters() counters;
    PacketIoEgress() packet_io;
    PfcEgress() pfc;

    apply {
        /* PFC first: it builds PFC frames (E2E clones) and sends held packets
         * round again; only what leaves is marked and counted. */
        pfc.apply(hdr, meta, standard_metadata);
        bool pfc_frame = meta.pfc_frame
            && (standard_metadata.instance_type == INSTANCE_EGRESS_CLONE
                || standard_metadata.instance_type == INSTANCE_INGRESS_CLONE);
        if (!meta.recirculating && !pfc_frame && !meta.pfc_rx) {
            ecn.apply(hdr, meta, standard_metadata);
            counters.apply(hdr, meta, standard_metadata);
            packet_io.apply(hdr, meta, standard_metadata);
        }
    }
}

V1Switch(FabricParser(),
         FabricVerifyChecksum(),
         FabricIngress(),
         FabricEgress(),
         FabricComputeChecksum(),
         FabricDeparser()) main;

#endif
