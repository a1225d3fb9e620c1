/* == and != on headers, header stacks and varbit fields (validity and every
 * field, P4-16 8.17), with a local stack assigned element by element, and a
 * stack of varbit headers in the packet. `h.eth.type = TYPE_FLAGS;` once made
 * the lexer take TYPE_FLAGS for a type name (it followed the word `type`). */
#include <core.p4>
#include <v1model.p4>

const bit<16> TYPE_FLAGS = 0x88b6;

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header opt_t { bit<8> kind; varbit<16> data; }
header flags_t { bit<8> v; }
struct h_t { eth_t eth; opt_t first; opt_t[2] rest; flags_t flags; }
struct m_t { }

parser P(packet_in pk, out h_t h, inout m_t m, inout standard_metadata_t sm) {
    state start {
        pk.extract(h.eth);
        pk.extract(h.first, 16);
        pk.extract(h.rest.next, 16);
        transition select(h.eth.type) {
            0x0002: second;
            default: accept;
        }
    }
    state second {
        pk.extract(h.rest.next, 16);
        transition accept;
    }
}

control VC(inout h_t h, inout m_t m) { apply { } }

control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply {
        h.flags.setValid();
        h.flags.v = 0;
        if (h.first == h.rest[0]) { h.flags.v = h.flags.v | 1; }
        // an invalid header's fields are unspecified (BMv2 reads stale values): compare valid ones
        if (h.first.isValid() && h.rest[0].isValid() && h.first.data == h.rest[0].data) {
            h.flags.v = h.flags.v | 2;
        }
        opt_t[2] copy;
        copy[0] = h.first;
        copy[1] = h.rest[0];
        if (copy == h.rest) { h.flags.v = h.flags.v | 4; }
        if (h.rest[0] != h.rest[1]) { h.flags.v = h.flags.v | 8; }
        h.eth.type = TYPE_FLAGS;
        sm.egress_spec = 2;
    }
}

control E(inout h_t h, inout m_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout h_t h, inout m_t m) { apply { } }

control D(packet_out pk, in h_t h) {
    apply {
        pk.emit(h.eth);
        pk.emit(h.flags);
        pk.emit(h.first);
        pk.emit(h.rest);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
