/* A parser state whose body ends without a transition statement goes to
 * reject (P4-16 "Transition statements"); p4c warns, and so do we. */
#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header tag_t { bit<16> value; }
struct h_t { eth_t eth; tag_t tag; }
struct m_t { bit<8> a; }
parser P(packet_in pk, out h_t h, inout m_t m, inout standard_metadata_t sm) {
    state start { pk.extract(h.eth); transition select(h.eth.type) { 0x88b5: tagged; default: accept; } }
    state tagged { pk.extract(h.tag); }  // expect: warning: tagged: implicit transition to `reject'
}
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) { apply { sm.egress_spec = 1; } }
control E(inout h_t h, inout m_t m, inout standard_metadata_t sm) { apply { } }
control VC(inout h_t h, inout m_t m) { apply { } }
control CC(inout h_t h, inout m_t m) { apply { } }
control D(packet_out pk, in h_t h) { apply { pk.emit(h.eth); pk.emit(h.tag); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
