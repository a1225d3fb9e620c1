/* const_entry_priority: `@priority(N)` after a const entry's action is BMv2's
 * match order (the smallest first), whatever the entries' order; an entry
 * without one ranks by its position from 1. */
#include <core.p4>
#include <v1model.p4>

header tag_t { bit<8> key; bit<8> result; }
struct headers { tag_t tag; }
struct metadata {}

parser P(packet_in b, out headers h, inout metadata m, inout standard_metadata_t s) {
    state start { b.extract(h.tag); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply {} }
control I(inout headers h, inout metadata m, inout standard_metadata_t s) {
    action mark(bit<8> v) { h.tag.result = v; s.egress_spec = 1; }
    table pick {
        key = { h.tag.key: ternary; }
        actions = { mark; }
        const entries = {
            0x01 &&& 0x0f: mark(1) @priority(3);
            0x00 &&& 0x00: mark(2);
            0x01 &&& 0x0f: mark(3) @priority(1);
        }
    }
    apply { pick.apply(); }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t s) { apply {} }
control CC(inout headers h, inout metadata m) { apply {} }
control D(packet_out b, in headers h) { apply { b.emit(h.tag); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
