/* side_effect_calls: functions with out/inout arguments called inside
 * expressions - operands (read before or after the call, left to right),
 * short-circuit && and ||, the mux ?:, nested calls as arguments, a switch
 * expression, a select key - evaluated in P4-16 order with copy-in and
 * copy-out around each call (p4c lowers them with its SideEffectOrdering). */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> etype; }
header data_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e; bit<8> f; bit<8> g; bit<8> h; }
struct headers { eth_t eth; data_t data; }
struct metadata { bit<8> n; bit<8> m; }

bit<8> bump(inout bit<8> x) { x = x + 1; return x; }
bool step(inout bit<8> x, in bit<8> lim) { x = x + 1; return x < lim; }
bit<8> twice(out bit<8> y, in bit<8> v) { y = v; return v + v; }

parser P(packet_in pk, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.eth);
        transition select(hdr.eth.etype) { 0x88b5: data; default: accept; }
    }
    state data {
        pk.extract(hdr.data);
        meta.n = bump(hdr.data.h);
        transition select(bump(meta.n)) { 0: accept; default: accept; }
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 2;
        if (!hdr.data.isValid()) { return; }
        hdr.data.b = bump(hdr.data.a) + hdr.data.a;
        hdr.data.c = hdr.data.c + bump(hdr.data.c);
        if (hdr.data.a == 7 || step(hdr.data.d, 8w100)) { hdr.data.e = hdr.data.e | 1; }
        if (hdr.data.a != 9 && step(hdr.data.d, 8w50)) { hdr.data.e = hdr.data.e | 2; }
        meta.m = hdr.data.b > 128 ? bump(hdr.data.f) : twice(hdr.data.g, hdr.data.a);
        hdr.data.h = twice(hdr.data.g, bump(hdr.data.f)) + hdr.data.g;
        switch (bump(meta.m)) {
            1: { hdr.data.e = hdr.data.e | 4; }
            default: { hdr.data.e = hdr.data.e | 8; }
        }
        hdr.eth.src[7:0] = meta.m;
        hdr.eth.src[15:8] = meta.n;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pk, in headers hdr) { apply { pk.emit(hdr.eth); pk.emit(hdr.data); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
