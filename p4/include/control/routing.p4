/* L3 routing: LPM to a next-hop id, then a next hop: one member, or a group
 * member chosen by the action selector (ECMP / E-ECMP, control/hashing.p4). */
#ifndef AIZONE_ROUTING_P4
#define AIZONE_ROUTING_P4

#include "../header.p4"

control Routing(inout headers_t hdr,
                inout local_metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    direct_counter(CounterType.packets_and_bytes) ipv4_route_counter;
    direct_counter(CounterType.packets_and_bytes) ipv6_route_counter;
    /* BMv2 picks a group member as crc16(selector keys) % members. */
    action_selector(HashAlgorithm.crc16, SELECTOR_SIZE, 16) ecmp_selector;

    action set_next_id(next_id_t next_id) {
        meta.next_id = next_id;
        meta.routed = true;
    }

    action drop_no_route() {
        meta.drop_reason = DROP_NO_ROUTE;
    }

    table ipv4_route {
        key = {
            hdr.ipv4.dst_addr: lpm @name("dst_addr");
        }
        actions = { set_next_id; drop_no_route; }
        const default_action = drop_no_route();
        counters = ipv4_route_counter;
        size = ROUTE_TABLE_SIZE;
    }

    table ipv6_route {
        key = {
            hdr.ipv6.dst_addr: lpm @name("dst_addr");
        }
        actions = { set_next_id; drop_no_route; }
        const default_action = drop_no_route();
        counters = ipv6_route_counter;
        size = ROUTE_TABLE_SIZE;
    }

    /* The next hop: out of `port`, from `src_mac` (ours) to `dst_mac` (the
     * neighbour's). The TTL / hop limit is decremented in apply, where the
     * header's validity is known. */
    action set_output(port_t port, mac_addr_t src_mac, mac_addr_t dst_mac) {
        meta.has_next_hop = true;
        standard_metadata.egress_spec = port;
        hdr.ethernet.src_addr = src_mac;
        hdr.ethernet.dst_addr = dst_mac;
    }

    action drop_next_hop() {
        meta.drop_reason = DROP_NO_ROUTE;
    }

    /* A miss drops the packet, but not through the default action: P4Runtime
     * restricts the default entry of a table with an action profile or
     * selector to a constant NoAction (spec 9.1.4), and BMv2 runs no action
     * at all on such a miss (p4c-bm2-ss warns that it ignores default_action
     * here; with NoAction the two agree). Nor is `hit` enough: an entry whose
     * group has lost all its members is a hit that runs no action (BMv2's
     * empty_action). So apply drops whatever did not run set_output. */
    table next_hop {
        key = {
            meta.next_id: exact @name("next_id");
            meta.ecmp_key: selector @name("ecmp_key");
        }
        actions = { set_output; drop_next_hop; @defaultonly NoAction; }
        const default_action = NoAction();
        implementation = ecmp_selector;
        size = NEXT_HOP_TABLE_SIZE;
    }

    apply {
        /* A router must not forward what would leave with TTL 0: expired
         * packets are dropped and counted (DROP_TTL), not punted. */
        if (hdr.ipv4.isValid()) {
            if (hdr.ipv4.ttl <= 1) {
                meta.drop_reason = DROP_TTL;
            } else {
                ipv4_route.apply();
            }
        } else if (hdr.ipv6.isValid()) {
            if (hdr.ipv6.hop_limit <= 1) {
                meta.drop_reason = DROP_TTL;
            } else {
                ipv6_route.apply();
            }
        }
        if (meta.routed) {
            next_hop.apply();
            if (meta.has_next_hop) {
                if (hdr.ipv4.isValid()) {
                    hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
                } else {
                    hdr.ipv6.hop_limit = hdr.ipv6.hop_limit - 1;
                }
            } else if (meta.drop_reason == 0) {
                /* No entry for next_id, or an emptied group. */
                meta.drop_reason = DROP_NO_ROUTE;
            }
        }
    }
}

#endif
