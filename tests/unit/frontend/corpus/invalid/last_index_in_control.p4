/* A header stack's lastIndex is defined while parsing only (P4-16 §8.18);
 * p4c refuses it in a control with these words. */
#include <core.p4>
#include <v1model.p4>

header tag_t { bit<8> v; }
struct headers { tag_t[2] tags; }
struct metadata { bit<32> n; }

parser P(packet_in b, out headers h, inout metadata m, inout standard_metadata_t s) {
    state start { b.extract(h.tags.next); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply {} }
control I(inout headers h, inout metadata m, inout standard_metadata_t s) {
    apply {
        m.n = h.tags.lastIndex; // expect: error: 'lastIndex' for stacks can only be used in a parser
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t s) { apply {} }
control CC(inout headers h, inout metadata m) { apply {} }
control D(packet_out b, in headers h) { apply { b.emit(h.tags); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
