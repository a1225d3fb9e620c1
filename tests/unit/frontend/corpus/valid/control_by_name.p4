/* A control instance declared earlier passed by name as a constructor
 * argument (`Stamp() s1; Guard(s1) g;`): Guard applies it, and its table,
 * action and counter keep the names of where it is declared (I.s1.amount). */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct h_t { eth_t eth; }
struct m_t { }

parser P(packet_in pk, out h_t h, inout m_t m, inout standard_metadata_t sm) {
    state start { pk.extract(h.eth); transition accept; }
}

control VC(inout h_t h, inout m_t m) { apply { } }

control Stamp_t(inout h_t h);

control Stamp(inout h_t h) {
    counter(4, CounterType.packets) hits;
    action add(bit<8> n) { h.eth.src = h.eth.src + (bit<48>)n; }
    table amount {
        key = { h.eth.type : exact; }
        actions = { add; NoAction; }
        default_action = add(1);
    }
    apply {
        amount.apply();
        hits.count(0);
    }
}

control Guard(inout h_t h)(Stamp_t inner) {
    apply {
        if (h.eth.type != 0) {
            inner.apply(h);
        }
    }
}

control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    Stamp() s1;
    Guard(s1) g;
    apply {
        g.apply(h);
        sm.egress_spec = 2;
    }
}

control E(inout h_t h, inout m_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout h_t h, inout m_t m) { apply { } }
control D(packet_out pk, in h_t h) { apply { pk.emit(h.eth); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
