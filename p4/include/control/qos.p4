/* QoS: DSCP -> traffic class -> egress priority queue; ECN marking in egress. */
#ifndef AIZONE_QOS_P4
#define AIZONE_QOS_P4

#include "../header.p4"

control QosIngress(inout headers_t hdr,
                   inout local_metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    action set_tc(tc_t tc) {
        meta.tc = tc;
        standard_metadata.priority = tc;
    }

    table dscp_to_tc {
        key = {
            hdr.ipv4.dscp: ternary @name("ipv4_dscp");
            hdr.ipv6.dscp: ternary @name("ipv6_dscp");
        }
        actions = { set_tc; NoAction; }
        default_action = NoAction();
        size = 128;
    }

    apply {
        meta.tc = 0;
        dscp_to_tc.apply();
    }
}

control EcnEgress(inout headers_t hdr,
                  inout local_metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    action set_ecn_threshold(bit<19> depth) {
        meta.ecn_threshold = depth;
    }

    /* Per (egress port, class) queue depth, in packets, above which
     * ECN-capable packets are marked Congestion Experienced. */
    table ecn_threshold {
        key = {
            standard_metadata.egress_port: exact @name("port");
            meta.tc: exact @name("tc");
        }
        actions = { set_ecn_threshold; NoAction; }
        default_action = NoAction();
        size = 4096;
    }

    apply {
        meta.ecn_threshold = 0;
        if (ecn_threshold.apply().hit) {
            if (hdr.ipv4.isValid() && hdr.ipv4.ecn != 0
                    && standard_metadata.enq_qdepth >= meta.ecn_threshold) {
                hdr.ipv4.ecn = 3;
            }
            if (hdr.ipv6.isValid() && hdr.ipv6.ecn != 0
                    && standard_metadata.enq_qdepth >= meta.ecn_threshold) {
                hdr.ipv6.ecn = 3;
            }
        }
    }
}

#endif
