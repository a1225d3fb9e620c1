/* default_params: parameters with default values (P4-16 §6.8.2 "Optional
 * parameters and default values"). A missing argument takes the default: a
 * scalar apply parameter (`in bit<8> by = 5`), a struct one
 * (`in pair_t p = { 3, 0x40 }`), a constructor parameter and a function's;
 * one block is applied directly by its type name. Each default decides a
 * byte of the forwarded frame's source MAC or its EtherType. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct h_t { eth_t eth; }
struct m_t { bit<8> x; }
struct pair_t { bit<8> lo; bit<8> hi; }

parser P(packet_in pk, out h_t h, inout m_t m, inout standard_metadata_t sm) {
    state start { pk.extract(h.eth); transition accept; }
}

bit<8> scale(in bit<8> v, in bit<8> times = 3) {
    return v * times;
}

control Bump(inout bit<8> x, in bit<8> by = 5) {
    apply { x = x + by; }
}

control Place(inout bit<48> mac, in pair_t p = { 8w3, 8w0x40 }) {
    apply { mac[15:0] = p.hi ++ p.lo; }
}

control Mark(inout bit<16> t)(bit<16> tag = 16w0x88b5) {
    apply { t = t ^ tag; }
}

control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    Bump() bump;
    Place() place;
    Mark() mark;
    Mark(16w1) mark1;
    apply {
        m.x = h.eth.dst[7:0];
        bump.apply(m.x);
        h.eth.src[47:40] = m.x;
        bump.apply(m.x, 8w1);
        h.eth.src[39:32] = scale(m.x);
        Bump.apply(m.x);
        h.eth.src[31:24] = m.x;
        if (h.eth.dst[8:8] == 1) {
            place.apply(h.eth.src);
        } else {
            place.apply(h.eth.src, { h.eth.dst[23:16], h.eth.dst[31:24] });
        }
        mark.apply(h.eth.type);
        mark1.apply(h.eth.type);
        sm.egress_spec = 2;
    }
}

control E(inout h_t h, inout m_t m, inout standard_metadata_t sm) { apply { } }
control VC(inout h_t h, inout m_t m) { apply { } }
control CC(inout h_t h, inout m_t m) { apply { } }
control D(packet_out pk, in h_t h) { apply { pk.emit(h.eth); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
