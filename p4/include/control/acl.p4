/* ACL: punt to the controller or drop, by port, MAC, ethertype, L4 and RoCEv2 QP / PSN. */
#ifndef AIZONE_ACL_P4
#define AIZONE_ACL_P4

#include "../header.p4"

/* The controller uses it for what it must see (link checks: e.g. LLDP,
 * ethertype 0x88cc, punted as packet-ins with their ingress port; IPv6
 * neighbour discovery, ICMPv6 135/136, if it answers NDP itself) and to
 * drop traffic; the BTH keys let a test drop one RoCEv2 packet of a QP by
 * its PSN (loss recovery). A miss changes nothing. New keys go last, so
 * the match field ids of the older ones do not move. */
control Acl(inout headers_t hdr,
            inout local_metadata_t meta,
            inout standard_metadata_t standard_metadata) {
    direct_counter(CounterType.packets_and_bytes) acl_counter;

    action punt_to_cpu() {
        standard_metadata.egress_spec = CPU_PORT;
        meta.punted = true;
    }

    action drop() {
        meta.drop_reason = DROP_ACL;
    }

    action permit() {
    }

    table acl {
        key = {
            standard_metadata.ingress_port: ternary @name("ingress_port");
            hdr.ethernet.dst_addr: ternary @name("eth_dst");
            hdr.ethernet.ether_type: ternary @name("eth_type");
            meta.ip_proto: ternary @name("ip_proto");
            meta.l4_dst_port: ternary @name("l4_dst_port");
            meta.bth_dst_qp: ternary @name("bth_dst_qp");
            meta.bth_psn: ternary @name("bth_psn");
        }
        actions = { punt_to_cpu; drop; permit; @defaultonly NoAction; }
        const default_action = NoAction();
        counters = acl_counter;
        size = ACL_TABLE_SIZE;
    }

    apply {
        acl.apply();
    }
}

#endif
