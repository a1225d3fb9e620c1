/* What p4c-bm2-ss compiles although it is questionable, each shape once;
 * p4switch compiles it too, warns where the program cannot mean what it says,
 * and runs it as BMv2 does (a duplicate switch label, which BMv2 cannot load,
 * is in corpus/warn):
 *   - an unknown table property (ignored, as p4c warns);
 *   - an integer literal assigned to a `type` (converted implicitly);
 *   - direct_counter.count() outside an action (a no-op), direct_meter.read()
 *     outside one (the color of the table's hit: p4c drops `m.color = 0x44`
 *     as dead, the read being its next write);
 *   - a selector key on a table without an action_selector (the key is ignored);
 *   - an empty actions list (the table has NoAction only, as its default). */
#include <core.p4>
#include <v1model.p4>

type bit<16> Tag_t;

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header op_t { bit<8> a; bit<8> b; bit<16> tag; bit<8> c; bit<8> d; }
struct h_t { eth_t eth; op_t op; }
struct m_t { bit<8> color; }

parser P(packet_in pk, out h_t h, inout m_t m, inout standard_metadata_t sm) {
    state start {
        pk.extract(h.eth);
        pk.extract(h.op);
        transition accept;
    }
}

control VC(inout h_t h, inout m_t m) { apply { } }

control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    direct_counter(CounterType.packets) dc;
    direct_meter<bit<8>>(MeterType.packets) dm;
    Tag_t tag;

    action set_c(bit<8> c) { h.op.c = c; dc.count(); }
    action set_d(bit<8> d) { h.op.d = d; dm.read(m.color); }

    table by_a {
        key = { h.eth.src : selector; h.op.a : exact; }
        actions = { set_c; NoAction; }
        counters = dc;
        default_action = NoAction();
    }
    table with_prop {
        key = { h.op.a : exact; }
        actions = { set_d; NoAction; }
        meters = dm;
        default_action = NoAction();
        psa_idle_timeout = 7;
    }
    table no_actions {
        key = { h.op.a : exact; }
        actions = { }
    }

    apply {
        switch (h.op.a) {
            1: { h.op.b = 1; }
            2: { h.op.b = 2; }
        }
        tag = 0x5a5a;
        if (h.op.a == 4) {
            tag = 7;
        }
        h.op.tag = (bit<16>)tag;
        by_a.apply();
        with_prop.apply();
        dc.count();
        m.color = 0x44;
        dm.read(m.color);
        h.op.b = h.op.b + m.color;
        if (no_actions.apply().hit) {
            h.op.b = 0xff;
        }
        sm.egress_spec = 2;
    }
}

control E(inout h_t h, inout m_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout h_t h, inout m_t m) { apply { } }
control D(packet_out pk, in h_t h) { apply { pk.emit(h.eth); pk.emit(h.op); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
