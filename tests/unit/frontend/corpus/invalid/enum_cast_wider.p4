/* A serializable enum casts to its underlying type only (P4-16 §8.11.2):
 * widening needs a second cast, (bit<16>)(bit<8>)Proto.UDP. */
#include <core.p4>
#include <v1model.p4>

enum bit<8> Proto { TCP = 6, UDP = 17 }
struct headers {}
struct metadata { bit<16> l4; }

parser P(packet_in b, out headers h, inout metadata m, inout standard_metadata_t s) {
    state start { transition accept; }
}
control VC(inout headers h, inout metadata m) { apply {} }
control I(inout headers h, inout metadata m, inout standard_metadata_t s) {
    apply {
        m.l4 = (bit<16>)Proto.UDP; // expect: error: illegal cast from Proto to bit<16> (a serializable enum casts to bit<8> only)
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t s) { apply {} }
control CC(inout headers h, inout metadata m) { apply {} }
control D(packet_out b, in headers h) { apply {} }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
