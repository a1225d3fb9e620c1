/* union_stack: header unions in a header stack and in a struct, extracted,
 * assigned element to element and through a struct local, made valid in a
 * struct-typed local, and emitted. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> etype; }
header sel_t { bit<8> k0; bit<8> k1; bit<8> op; }
header a_t { bit<8> x; }
header b_t { bit<16> y; }
header_union u_t { a_t a; b_t b; }
struct pair_t { u_t u; bit<8> tag; }
struct headers { eth_t eth; sel_t sel; u_t[2] us; u_t one; }
struct metadata { bit<8> n; }

parser P(packet_in pk, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.eth);
        pk.extract(hdr.sel);
        transition select(hdr.sel.k0) { 1: u0a; 2: u0b; default: accept; }
    }
    state u0a { pk.extract(hdr.us[0].a); transition second; }
    state u0b { pk.extract(hdr.us[0].b); transition second; }
    state second { transition select(hdr.sel.k1) { 1: u1a; 2: u1b; default: accept; } }
    state u1a { pk.extract(hdr.us[1].a); transition accept; }
    state u1b { pk.extract(hdr.us[1].b); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    pair_t keep;
    apply {
        sm.egress_spec = 2;
        if (!hdr.sel.isValid()) {
            return;  // its fields are unspecified (BMv2: what they last held)
        }
        if (hdr.sel.op == 1) {
            hdr.one = hdr.us[0];
        } else if (hdr.sel.op == 2) {
            hdr.us[0] = hdr.us[1];
        } else if (hdr.sel.op == 3) {
            keep.u = hdr.us[1];
            keep.tag = 7;
            hdr.us[1] = hdr.us[0];
            hdr.us[0] = keep.u;
            hdr.one = keep.u;
        } else if (hdr.sel.op == 4) {
            pair_t p;
            p.u.a.setValid();
            p.u.a.x = 0x5a;
            hdr.one = p.u;
        }
        if (hdr.one.b.isValid()) { hdr.one.b.y = hdr.one.b.y + 1; }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pk, in headers hdr) { apply { pk.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
