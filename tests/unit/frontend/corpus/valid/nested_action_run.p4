/* nested_action_run: a switch on one table's action_run nested in a case of
 * another, a control instance passed as a constructor argument of a control
 * type, and serializable enum members as values and masks in const entries. */
#include <core.p4>
#include <v1model.p4>

enum bit<8> Kind_t { A = 0x10, B = 0x20, LOW = 0x0f, HIGH = 0xf0 }
header eth_t { bit<48> dst; bit<48> src; bit<16> etype; }
header t_t { Kind_t kind; bit<8> x; bit<8> y; }
struct headers { eth_t eth; t_t t; }
struct metadata { }

parser P(packet_in pk, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.eth); pk.extract(hdr.t); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Sub(inout headers hdr, inout standard_metadata_t sm) {
    action mark(bit<8> m) { hdr.t.y = hdr.t.y | m; }
    table marks {
        key = { hdr.t.x: exact; }
        actions = { mark; NoAction; }
        default_action = mark(0x80);
    }
    apply { marks.apply(); }
}
control Sub2(inout headers hdr, inout standard_metadata_t sm) {
    apply { hdr.t.y = hdr.t.y | 0x40; }
}
control SubT(inout headers hdr, inout standard_metadata_t sm);
control Wrap(inout headers hdr, inout standard_metadata_t sm)(SubT inner) {
    apply { inner.apply(hdr, sm); hdr.t.y = hdr.t.y + 1; }
}

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    Wrap(Sub()) w1;
    Wrap(Sub2()) w2;
    action a1() { hdr.t.x = 1; }
    action a2() { hdr.t.x = 2; }
    action b1() { hdr.t.y = 0x11; }
    action b2() { hdr.t.y = 0x22; }
    table outer {
        key = { hdr.t.kind: ternary; }
        actions = { a1; a2; NoAction; }
        const entries = {
            (Kind_t.A &&& Kind_t.HIGH): a1();
            (Kind_t.B &&& Kind_t.HIGH): a2();
        }
        default_action = NoAction();
    }
    table inner {
        key = { hdr.t.x: exact; hdr.eth.dst[7:0]: exact; }
        actions = { b1; b2; NoAction; }
        const entries = { (1, 1): b1(); (2, 2): b2(); }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 2;
        if (!hdr.t.isValid()) {
            exit;  // the tables read hdr.t: a frame too short for it goes out as it came
        }
        switch (outer.apply().action_run) {
            a1: {
                switch (inner.apply().action_run) {
                    b1: { hdr.eth.src[7:0] = 0xb1; }
                    default: { hdr.eth.src[7:0] = 0xd1; }
                }
                w1.apply(hdr, sm);
            }
            a2: { w2.apply(hdr, sm); }
            default: { hdr.eth.src[7:0] = 0xff; }
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pk, in headers hdr) { apply { pk.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
