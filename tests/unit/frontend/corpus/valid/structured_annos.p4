/* structured_annos: P4-16 structured annotations, `@Name[expr, ...]` and
 * `@Name[key=expr, ...]`, folded to the values P4Info lists under
 * structured_annotations (a table, its key, its action refs, an action and
 * its parameter), and on objects P4Info does not describe (a header field,
 * a parser state), on a program that forwards by them. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    @Units[bytes="6", count=1] bit<48> srcAddr;
    bit<16> etherType;
}

struct metadata { }

struct headers {
    ethernet_t ethernet;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    @Entry[]
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
    @Owner["fabric", -3, !false, 7 > 2 * 4,]
    action forward(@Range[lo=1, hi=4, inclusive=true] bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    action flood() {
        standard_metadata.mcast_grp = 1;
    }
    @Tags[1 + 2, "l2", (0x10 << 2) | 1]
    @Tuning[policy="first", weight=250 + 10, strict=1 == 1]
    table dmac {
        key = {
            hdr.ethernet.dstAddr: exact @FieldInfo["mac", 48];
            hdr.ethernet.etherType: ternary @FieldInfo[kind="ethertype"];
        }
        actions = {
            @Choice[1] forward;
            @Choice[2] flood;
            NoAction;
        }
        default_action = NoAction();
    }
    apply {
        standard_metadata.egress_spec = 2;
        dmac.apply();
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
    apply {
        packet.emit(hdr.ethernet);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
