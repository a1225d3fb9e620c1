/* An entry's annotations go after its action (P4-16's grammar: keyset ':'
 * action annotations ';'); before the keyset is a syntax error, as in p4c. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; }
struct headers { h_t h; }
struct metadata {}

parser P(packet_in b, out headers h, inout metadata m, inout standard_metadata_t s) {
    state start { b.extract(h.h); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply {} }
control I(inout headers h, inout metadata m, inout standard_metadata_t s) {
    action set(bit<9> p) { s.egress_spec = p; }
    table t {
        key = { h.h.a: ternary; }
        actions = { set; }
        const entries = {
            @priority(2) 0x01 &&& 0xff: set(1); // expect: error: syntax error, unexpected '@priority'
        }
    }
    apply { t.apply(); }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t s) { apply {} }
control CC(inout headers h, inout metadata m) { apply {} }
control D(packet_out b, in headers h) { apply { b.emit(h.h); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
