/* entry_priorities: P4 1.2.4 non-const `entries` whose priorities p4c's
 * EntryPriorities pass computes from `priority =`, `largest_priority_wins`
 * and `priority_delta` (t1..t5 follow p4c's own sample of that pass), per
 * entry `const`, and tables without any explicit priority. The ingress picks
 * the table by the low byte of the destination MAC and forwards to the port
 * the winning entry names. */
#include <core.p4>
#include <v1model.p4>

header ethernet_h { bit<48> dst; bit<48> src; bit<16> etype; }
struct headers_t { ethernet_h eth; }
struct metadata_t { }

parser Prs(packet_in pkt, out headers_t hdr, inout metadata_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}
control VC(inout headers_t hdr, inout metadata_t m) { apply { } }

control Ing(inout headers_t hdr, inout metadata_t m, inout standard_metadata_t sm) {
    action a() { }
    action a_params(bit<9> param) { sm.egress_spec = param; }

    table t1 {
        key = { hdr.eth.src: exact; hdr.eth.etype: ternary; }
        actions = { a; a_params; }
        default_action = a;
        largest_priority_wins = false;
        priority_delta = 10;
        entries = {
            const priority=10: (0x01, 0x1111 &&& 0xF   ) : a_params(1);
                               (0x02, 0x1181           ) : a_params(2);
                               (0x03, 0x1000 &&& 0xF000) : a_params(3);
            const              (0x04, 0x0210 &&& 0x02F0) : a_params(4);
                  priority=40: (0x04, 0x0010 &&& 0x02F0) : a_params(5);
                               (0x06, _                ) : a_params(6);
        }
    }
    table t2 {
        key = { hdr.eth.src: exact; hdr.eth.etype: ternary; }
        actions = { a; a_params; }
        default_action = a;
        largest_priority_wins = false;
        priority_delta = 10;
        entries = {
            const priority=11: (0x01, 0x1111 &&& 0xF   ) : a_params(1);
                               (0x02, 0x1181           ) : a_params(2);
                               (0x03, 0x1000 &&& 0xF000) : a_params(3);
            const              (0x04, 0x0210 &&& 0x02F0) : a_params(4);
                  priority=40: (0x04, 0x0010 &&& 0x02F0) : a_params(5);
                               (0x06, _                ) : a_params(6);
        }
    }
    table t3 {
        key = { hdr.eth.src: exact; hdr.eth.etype: ternary; }
        actions = { a; a_params; }
        default_action = a;
        largest_priority_wins = false;
        entries = {
            const priority=11: (0x01, 0x1111 &&& 0xF   ) : a_params(1);
                               (0x02, 0x1181           ) : a_params(2);
                               (0x03, 0x1000 &&& 0xF000) : a_params(3);
            const              (0x04, 0x0210 &&& 0x02F0) : a_params(4);
                  priority=13: (0x04, 0x0010 &&& 0x02F0) : a_params(5);
                               (0x06, _                ) : a_params(6);
        }
    }
    table t4 {
        key = { hdr.eth.src: exact; hdr.eth.etype: ternary; }
        actions = { a; a_params; }
        default_action = a;
        largest_priority_wins = false;
        entries = {
            const priority=2001: (0x01, 0x1111 &&& 0xF   ) : a_params(1);
                  priority=2001: (0x02, 0x1181           ) : a_params(2);
                  priority=2001: (0x03, 0x1000 &&& 0xF000) : a_params(3);
                  priority=2001: (0x04, 0x0210 &&& 0x02F0) : a_params(4);
            const priority=2001: (0x04, 0x0010 &&& 0x02F0) : a_params(5);
                  priority=2001: (0x06, _                ) : a_params(6);
        }
    }
    table t5 {
        key = { hdr.eth.src: exact; hdr.eth.etype: ternary; }
        actions = { a; a_params; }
        default_action = a;
        priority_delta = 100;
        entries = {
            priority=1000: (0x01, 0x1111 &&& 0xF   ) : a_params(1);
                           (0x02, 0x1181           ) : a_params(2);
                           (0x03, 0x1000 &&& 0xF000) : a_params(3);
                           (0x04, 0x0210 &&& 0x02F0) : a_params(4);
            priority= 901: (0x04, 0x0010 &&& 0x02F0) : a_params(5);
                           (0x06, _                ) : a_params(6);
        }
    }
    // no priorities, default properties: the first entry gets the largest
    table largest {
        key = { hdr.eth.etype: ternary; }
        actions = { a; a_params; }
        default_action = a;
        entries = {
            0x0800 &&& 0xFFFF: a_params(1);
            0x0800 &&& 0xFF00: a_params(2);
            _:                 a_params(3);
        }
    }
    // no priorities, smallest wins, delta 10: the first entry gets 1
    table smallest {
        key = { hdr.eth.etype: ternary; }
        actions = { a; a_params; }
        default_action = a;
        largest_priority_wins = false;
        priority_delta = 10;
        entries = {
            0x0800 &&& 0xFFFF: a_params(1);
            0x0800 &&& 0xFF00: a_params(2);
            _:                 a_params(3);
        }
    }
    // no priorities on an exact table: priorities in the IR, none in P4Runtime
    table exact_only {
        key = { hdr.eth.etype: exact; }
        actions = { a; a_params; }
        default_action = a;
        priority_delta = 7;
        entries = {
            0x0800: a_params(1);
            const 0x86DD: a_params(2);
        }
    }
    // @priority is not a P4Runtime priority (const entries count down there) but
    // BMv2's match order: the smallest first
    table annotated {
        key = { hdr.eth.etype: ternary; }
        actions = { a; a_params; }
        default_action = a;
        const entries = {
            0x0800 &&& 0xFF00: a_params(1) @priority(1);
            _:                 a_params(2) @priority(9);
        }
    }

    apply {
        bit<32> priority = 6;  // `priority` is still an identifier
        bit<8> which = hdr.eth.dst[7:0];
        if (which == 1) { t1.apply(); }
        else if (which == 2) { t2.apply(); }
        else if (which == 3) { t3.apply(); }
        else if (which == 4) { t4.apply(); }
        else if (which == 5) { t5.apply(); }
        else if (which == 6) { largest.apply(); }
        else if (which == 7) { smallest.apply(); }
        else if (which == 8) { exact_only.apply(); }
        else if (which == 9) { annotated.apply(); }
    }
}

control Egr(inout headers_t hdr, inout metadata_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout metadata_t m) { apply { } }
control Dep(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.eth); } }

V1Switch(Prs(), VC(), Ing(), Egr(), CC(), Dep()) main;
