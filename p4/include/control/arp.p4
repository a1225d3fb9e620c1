/* Answers ARP requests for the switch's host-facing gateway addresses (RTSW
 * only). Anything else ARP is dropped (DROP_NOT_IP). IPv6 neighbour
 * discovery is not answered in the data plane: hosts get a static
 * neighbour entry for their gateway, or the controller punts NDP through
 * the ACL and answers it. */
#ifndef AIZONE_ARP_P4
#define AIZONE_ARP_P4

#include "../header.p4"

control ArpResponder(inout headers_t hdr,
                     inout local_metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    direct_counter(CounterType.packets_and_bytes) arp_counter;

    /* Turn the request into a reply from `router_mac`, back out of the port
     * it came in on. */
    action reply(mac_addr_t router_mac) {
        hdr.arp.opcode = ARP_OP_REPLY;
        hdr.arp.target_mac = hdr.arp.sender_mac;
        hdr.arp.sender_mac = router_mac;
        ipv4_addr_t asked = hdr.arp.target_ip;
        hdr.arp.target_ip = hdr.arp.sender_ip;
        hdr.arp.sender_ip = asked;
        hdr.ethernet.dst_addr = hdr.ethernet.src_addr;
        hdr.ethernet.src_addr = router_mac;
        standard_metadata.egress_spec = standard_metadata.ingress_port;
    }

    action ignore() {
        meta.drop_reason = DROP_NOT_IP;
    }

    table arp_reply {
        key = {
            hdr.arp.target_ip: exact @name("target_ip");
        }
        actions = { reply; ignore; }
        const default_action = ignore();
        counters = arp_counter;
        size = ARP_TABLE_SIZE;
    }

    apply {
        if (hdr.arp.opcode == ARP_OP_REQUEST) {
            arp_reply.apply();
        } else {
            meta.drop_reason = DROP_NOT_IP;
        }
    }
}

#endif
