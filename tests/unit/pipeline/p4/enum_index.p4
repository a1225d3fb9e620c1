/* enum_index: header-stack elements indexed by a serializable enum, a
 * member (constant) and a variable (run time), as p4c takes them: the index
 * is the enum's value. The first byte after Ethernet is a Slot; the stack's
 * element at that slot gets 0xee, and element Slot.LAST gets 0x77. */
#include <core.p4>
#include <v1model.p4>

enum bit<8> Slot {
    FIRST = 0,
    MIDDLE = 1,
    LAST = 2
}

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header sel_t {
    bit<8> slot;
}

header item_t {
    bit<8> v;
}

struct metadata { }

struct headers {
    ethernet_t ethernet;
    sel_t      sel;
    item_t[3]  items;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.sel);
        packet.extract(hdr.items.next);
        packet.extract(hdr.items.next);
        packet.extract(hdr.items.next);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = 2;
        Slot s = (Slot) hdr.sel.slot;
        hdr.items[s].v = 0xee;
        hdr.items[Slot.LAST].v = hdr.items[Slot.LAST].v | 0x70;
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
        packet.emit(hdr);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
