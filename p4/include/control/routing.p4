/* L3 routing: LPM to a next-hop id, then a next hop chosen by an action
 * selector (ECMP / E-ECMP) or pinned by the controller (a one-member group). */
#ifndef AIZONE_ROUTING_P4
#define AIZONE_ROUTING_P4

#include "../header.p4"

control Routing(inout headers_t hdr,
                inout local_metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    direct_counter(CounterType.packets_and_bytes) ipv4_route_counter;
    direct_counter(CounterType.packets_and_bytes) ipv6_route_counter;
    /* crc16 over the selector keys, as BMv2 picks a group member. */
    action_selector(HashAlgorithm.crc16, SELECTOR_SIZE, 16) ecmp_selector;

    action set_next_id(next_id_t next_id) {
        meta.next_id = next_id;
        meta.routed = true;
    }

    action drop_no_route() {
        meta.drop_reason = DROP_NO_ROUTE;
    }

    action set_next_id_v6(next_id_t next_id) {
        meta.next_id = next_id;
        meta.routed = true;
    }

    action drop_no_route_v6() {
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
        actions = { set_next_id_v6; drop_no_route_v6; }
        const default_action = drop_no_route_v6();
        counters = ipv6_route_counter;
        size = ROUTE_TABLE_SIZE;
    }

    /* Rewrite for the chosen next hop: MACs, port, TTL / hop limit. */
    action set_output(port_t port, mac_addr_t src_mac, mac_addr_t dst_mac) {
        standard_metadata.egress_spec = port;
        hdr.ethernet.src_addr = src_mac;
        hdr.ethernet.dst_addr = dst_mac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        hdr.ipv6.hop_limit = hdr.ipv6.hop_limit - 1;
    }

    action drop_next_hop() {
        meta.drop_reason = DROP_NO_ROUTE;
    }

    table next_hop {
        key = {
            meta.next_id: exact @name("next_id");
            hdr.ipv4.src_addr: selector @name("ipv4_src");
            hdr.ipv4.dst_addr: selector @name("ipv4_dst");
            hdr.ipv6.src_addr: selector @name("ipv6_src");
            hdr.ipv6.dst_addr: selector @name("ipv6_dst");
            meta.ip_proto: selector @name("ip_proto");
            meta.l4_src_port: selector @name("l4_src_port");
            meta.l4_dst_port: selector @name("l4_dst_port");
            meta.hash_qp: selector @name("dest_qp");
            meta.hash_salt: selector @name("salt");
        }
        actions = { set_output; drop_next_hop; }
        const default_action = drop_next_hop();
        implementation = ecmp_selector;
        size = NEXT_HOP_TABLE_SIZE;
    }

    apply {
        if (hdr.ipv4.isValid()) {
            if (hdr.ipv4.ttl <= 1) {
                meta.drop_reason = DROP_TTL;
                return;
            }
            ipv4_route.apply();
        } else if (hdr.ipv6.isValid()) {
            if (hdr.ipv6.hop_limit <= 1) {
                meta.drop_reason = DROP_TTL;
                return;
            }
            ipv6_route.apply();
        }
        if (meta.routed) {
            next_hop.apply();
        }
    }
}

#endif
