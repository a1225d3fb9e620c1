/* stack_index_arg: header-stack elements at a run-time index, passed as
 * inout action arguments (a field, a whole header), written and read
 * directly. In range they are the element; out of range a read gives an
 * unspecified value and a write does nothing (P4-16), so the packet goes
 * on unchanged. BMv2 1.15.5 cannot run p4c's JSON for run-time indices. */
#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> etype; }
header op_t { bit<8> op; bit<8> idx; }
header item_t { bit<8> v; bit<8> w; }
struct headers { eth_t eth; op_t op; item_t[3] items; }
struct metadata { }
parser P(packet_in pk, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.eth);
        pk.extract(hdr.op);
        pk.extract(hdr.items[0]);
        pk.extract(hdr.items[1]);
        pk.extract(hdr.items[2]);
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action add(inout bit<8> v) { v = v + 1; }
    action bump(inout item_t it) { it.w = it.w + 1; }
    apply {
        sm.egress_spec = 2;
        if (hdr.op.op == 1) { add(hdr.items[hdr.op.idx].v); }
        else if (hdr.op.op == 2) { bump(hdr.items[hdr.op.idx]); }
        else if (hdr.op.op == 3) { hdr.items[hdr.op.idx].w = 0x77; }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pk, in headers hdr) { apply { pk.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
