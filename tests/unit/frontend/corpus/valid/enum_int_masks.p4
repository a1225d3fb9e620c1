/* Integers where a serializable enum is the key: an int mask on an enum
 * member (`Kind_t.Tunnel &&& 0xff00`), an int value with its mask, and an int
 * literal as a select case on an enum field; p4c takes them as the enum's
 * underlying bits. */
#include <core.p4>
#include <v1model.p4>

enum bit<16> Kind_t { Plain = 0x1234, Tunnel = 0x5600, Other = 0x0001 }

header eth_t { bit<48> dst; bit<48> src; Kind_t kind; }
header mark_t { bit<8> by_table; bit<8> by_parser; }
struct h_t { eth_t eth; mark_t mark; }
struct m_t { bit<8> parsed; }

parser P(packet_in pk, out h_t h, inout m_t m, inout standard_metadata_t sm) {
    state start {
        pk.extract(h.eth);
        pk.extract(h.mark);
        transition select(h.eth.kind) {
            0x1234: plain;
            Kind_t.Tunnel &&& 0xff00: tunnel;
            default: accept;
        }
    }
    state plain {
        m.parsed = 1;
        transition accept;
    }
    state tunnel {
        m.parsed = 2;
        transition accept;
    }
}

control VC(inout h_t h, inout m_t m) { apply { } }

control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    action set(bit<8> v) { h.mark.by_table = v; }
    table by_kind {
        key = { h.eth.kind : ternary; }
        actions = { set; NoAction; }
        const entries = {
            Kind_t.Tunnel &&& 0xff00 : set(2);
            0x1234 &&& 0xffff : set(1);
            Kind_t.Other &&& 16w0x000f : set(3);
        }
        default_action = NoAction();
    }
    apply {
        by_kind.apply();
        h.mark.by_parser = m.parsed;
        sm.egress_spec = 2;
    }
}

control E(inout h_t h, inout m_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout h_t h, inout m_t m) { apply { } }
control D(packet_out pk, in h_t h) { apply { pk.emit(h.eth); pk.emit(h.mark); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
