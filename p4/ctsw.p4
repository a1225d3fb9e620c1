/* aizone CTSW: the cluster training switch (spine of an AI zone). Its
 * downlinks go to the zone's RTSWs (parallel links form a bundle group), its
 * uplinks to the ATSWs. Routes IPv4/IPv6 with pin / ECMP / E-ECMP next hops,
 * maps DSCP to classes and queues, marks ECN, drops PFC frames and counts
 * load per port and class. No hosts attach: ARP is not answered. */
#include <core.p4>
#include <v1model.p4>

#include "include/define.p4"
#include "include/header.p4"
#include "include/parser.p4"
#include "include/control/checks.p4"
#include "include/control/packet_io.p4"
#include "include/control/acl.p4"
#include "include/control/config.p4"
#include "include/control/qos.p4"
#include "include/control/hashing.p4"
#include "include/control/routing.p4"
#include "include/control/counters.p4"

control FabricIngress(inout headers_t hdr,
                      inout local_metadata_t meta,
                      inout standard_metadata_t standard_metadata) {
    IngressChecks() checks;
    PacketIoIngress() packet_io;
    Acl() acl;
    SwitchConfig() config;
    QosIngress() qos;
    EcmpHash() hashing;
    Routing() routing;
    IngressCounters() counters;

    apply {
        if (hdr.packet_out.isValid()) {
            packet_io.apply(hdr, meta, standard_metadata);
        } else {
            checks.apply(hdr, meta, standard_metadata);
            if (meta.drop_reason == 0) {
                acl.apply(hdr, meta, standard_metadata);
            }
            if (meta.drop_reason == 0 && !meta.punted) {
                if (hdr.ipv4.isValid() || hdr.ipv6.isValid()) {
                    config.apply(hdr, meta);
                    qos.apply(hdr, meta, standard_metadata);
                    hashing.apply(hdr, meta);
                    routing.apply(hdr, meta, standard_metadata);
                } else {
                    meta.drop_reason = DROP_NOT_IP;
                }
            }
        }
        counters.apply(hdr, meta, standard_metadata);
    }
}

control FabricEgress(inout headers_t hdr,
                     inout local_metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    EcnEgress() ecn;
    EgressCounters() counters;
    PacketIoEgress() packet_io;

    apply {
        ecn.apply(hdr, meta, standard_metadata);
        counters.apply(hdr, meta, standard_metadata);
        packet_io.apply(hdr, meta, standard_metadata);
    }
}

V1Switch(FabricParser(),
         FabricVerifyChecksum(),
         FabricIngress(),
         FabricEgress(),
         FabricComputeChecksum(),
         FabricDeparser()) main;
