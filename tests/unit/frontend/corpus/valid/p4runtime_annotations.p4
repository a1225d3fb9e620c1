/* p4runtime_annotations: the P4Runtime annotations of an action selector
 * with their argument written as a string ("sum_of_weights"; P4Info repeats
 * it in its quotes) or as a name (sum_of_members; P4Info prints it bare), and
 * @platform_property on main, whose body P4Info keeps as its tokens
 * ("a = 1 , b = 2"). The selector spreads frames over its members' ports by
 * the low byte of the source address. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct headers { ethernet_t ethernet; }
struct metadata { }

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action to_port(bit<9> port) {
        standard_metadata.egress_spec = port;
    }

    @max_group_size(8) @selector_size_semantics("sum_of_weights") @max_member_weight(4)
    action_selector(HashAlgorithm.identity, 32w64, 32w8) by_weight;

    @max_group_size(4) @selector_size_semantics(sum_of_members) @max_member_weight(2)
    action_selector(HashAlgorithm.identity, 32w64, 32w8) by_members;

    table spread {
        key = {
            hdr.ethernet.dstAddr: exact;
            hdr.ethernet.srcAddr[7:0]: selector;
        }
        actions = { to_port; NoAction; }
        implementation = by_weight;
    }

    table spread_too {
        key = {
            hdr.ethernet.etherType: exact;
            hdr.ethernet.srcAddr[7:0]: selector;
        }
        actions = { to_port; NoAction; }
        implementation = by_members;
    }

    apply {
        if (!spread.apply().hit) {
            spread_too.apply();
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyDeparser(packet_out packet, in headers hdr) {
    apply { packet.emit(hdr.ethernet); }
}

@platform_property(multicast_group_table_size = 16,
                   multicast_group_table_max_replicas_per_entry = 4)
V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
