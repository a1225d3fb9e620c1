/* Header-stack elements read and written through an index computed at run
 * time: in the parser (an assignment and a select key) and in a control
 * (items[i].v, items[i + 1].v, a write). Only valid elements are read: an
 * invalid header's fields are unspecified (BMv2 reads what an earlier packet
 * left). isValid() on such an element is left out (BMv2 1.15.5 refuses the
 * JSON p4c writes for it), and so is an index out of range (BMv2 aborts). */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header op_t { bit<8> i; bit<8> got; bit<8> next; bit<8> low; }
header item_t { bit<8> v; }
struct h_t { eth_t eth; op_t op; item_t[4] items; }
struct m_t { bit<8> in_parser; }

parser P(packet_in pk, out h_t h, inout m_t m, inout standard_metadata_t sm) {
    state start {
        pk.extract(h.eth);
        pk.extract(h.op);
        pk.extract(h.items.next);
        pk.extract(h.items.next);
        pk.extract(h.items.next);
        pk.extract(h.items.next);
        m.in_parser = h.items[(bit<2>)h.op.i].v;
        transition select(h.items[(bit<2>)h.op.i].v) {
            0xa2: two;
            default: accept;
        }
    }
    state two {
        m.in_parser = m.in_parser + 1;
        transition accept;
    }
}

control VC(inout h_t h, inout m_t m) { apply { } }

control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply {
        if (h.items[3].isValid()) {  // all four were extracted
            bit<2> i = (bit<2>)h.op.i;
            h.op.got = h.items[i].v ^ m.in_parser;
            if (i < 3) {
                h.op.next = h.items[i + 1].v + 1;
            }
            h.op.low = h.items[i].v & 0x0f;
            if (i < 2) {
                h.items[i].v = h.items[i].v + 0x10;
            }
        }
        sm.egress_spec = 2;
    }
}

control E(inout h_t h, inout m_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout h_t h, inout m_t m) { apply { } }
control D(packet_out pk, in h_t h) { apply { pk.emit(h.eth); pk.emit(h.op); pk.emit(h.items); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
