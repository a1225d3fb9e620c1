/* exit_copy_out: `exit` in actions with inout arguments (called directly and
 * from tables, where the argument is bound in the actions list) still copies
 * the argument out; `exit` after a table apply; ternary tables keyed on
 * header-stack elements whose actions bind out/inout arguments to stack
 * elements, applied in a switch on action_run; stack elements (a field, a
 * whole header) passed as inout action arguments; header-typed arguments
 * of exiting actions and sub-controls, copied in and out (an action that
 * also writes the argument's storage directly, an `out` header). */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> etype; }
header op_t { bit<8> op; bit<8> idx; bit<8> a; bit<8> b; }
header item_t { bit<8> v; bit<8> w; }
struct headers { eth_t eth; op_t op; item_t[3] items; }
struct metadata { bit<8> x; }

parser P(packet_in pk, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.eth);
        pk.extract(hdr.op);
        pk.extract(hdr.items[0]);
        pk.extract(hdr.items[1]);
        pk.extract(hdr.items[2]);
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Sub(inout item_t it, inout bit<8> x) {
    apply { it.w = 0x31; x = 0x32; exit; }
}
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action set_and_exit(inout bit<8> v, bit<8> val) { v = val; exit; }
    action set_exit_hdr(inout item_t it) { it.w = 0x55; exit; }
    action add(inout bit<8> v) { v = v + 1; }
    action setbyte(out bit<8> v, bit<8> val) { v = val; }
    action noop() { }
    action alias_exit(inout item_t it) { hdr.items[0].v = 0x99; it.w = 0x66; exit; }
    action make_exit(out item_t it) { it.setValid(); it.v = 0x42; it.w = 0x43; exit; }
    Sub() sub;
    table t_exit {
        key = { hdr.op.a: exact; }
        actions = { set_and_exit(hdr.op.b); noop; }
        default_action = noop();
    }
    table t_exit2 {
        key = { hdr.op.a: exact; }
        actions = { set_and_exit(hdr.op.a); add(hdr.op.b); noop; }
        default_action = noop();
    }
    table t_stack {
        key = { hdr.items[0].v: ternary; }
        actions = { setbyte(hdr.items[1].w); noop; }
        default_action = noop();
    }
    table t_after {
        key = { hdr.items[1].v: ternary; }
        actions = { setbyte(hdr.items[2].w); add(hdr.items[2].v); noop; }
        default_action = noop();
    }
    apply {
        sm.egress_spec = 2;
        // A frame too short for every header goes out as it came: the branches read
        // hdr.op and the items, and a field of an invalid header has no defined value.
        if (!hdr.items[2].isValid()) {
            exit;
        }
        if (hdr.op.op == 1) {
            set_and_exit(hdr.op.b, 0x11);
        } else if (hdr.op.op == 2) {
            t_exit.apply();
            hdr.op.a = 0xee;
        } else if (hdr.op.op == 3) {
            add(hdr.items[1].v);
        } else if (hdr.op.op == 4) {
            set_exit_hdr(hdr.items[2]);
        } else if (hdr.op.op == 5) {
            switch (t_stack.apply().action_run) {
                setbyte: { t_after.apply(); }
                noop: { hdr.op.a = 0x77; }
            }
        } else if (hdr.op.op == 6) {
            t_exit2.apply();
            exit;
        } else if (hdr.op.op == 7) {
            alias_exit(hdr.items[0]);
        } else if (hdr.op.op == 8) {
            make_exit(hdr.items[1]);
        } else if (hdr.op.op == 9) {
            sub.apply(hdr.items[2], hdr.op.a);
        }
        hdr.op.b = hdr.op.b + 0x80;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pk, in headers hdr) { apply { pk.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
