#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct h_t { eth_t eth; }
struct m_t { }
parser P(packet_in pk, out h_t h, inout m_t m, inout standard_metadata_t sm) {
    state start { pk.extract(h.eth); transition accept; }
}
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) { apply { } }
control E(inout h_t h, inout m_t m, inout standard_metadata_t sm) { apply { } }
control VC(inout h_t h, inout m_t m) { apply { } }
control CC(inout h_t h, inout m_t m) { apply { } }
control D(packet_out pk, in h_t h) { apply { pk.emit(h.eth); } }
V1Switch(p = P(), vr = VC(), ingress = I(), eg = E(), ck = CC(), dep = D()) main; // expect: error: V1Switch: no parameter named 'ingress'
