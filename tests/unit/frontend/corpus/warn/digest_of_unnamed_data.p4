#include "../include/pre.p4"
/* digest() of data whose type has no name (a list expression's tuple, a bit<W>): p4c names
 * each such call's digest digest_N, N counting them in the order its P4Runtime serializer
 * visits them (per block: the control's actions, the globals it uses first, then its apply
 * block; an unused action is not visited); a struct's digest is named after the struct. */
struct learn_t { bit<48> mac; bit<9> port; }
action global_learn() { digest(1, { 16w7 }); } // expect: warning: digest: its data's type has no name: P4Info calls this digest digest_0
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    action unused() { digest(1, { h.eth.type }); }
    action learn() {
        digest(1, { h.eth.src, sm.ingress_port }); // expect: warning: digest: its data's type has no name: P4Info calls this digest digest_1
    }
    action learn_again() {
        digest(2, { h.eth.src, sm.ingress_port }); // expect: warning: digest: its data's type has no name: P4Info calls this digest digest_2
    }
    action named() {
        digest<learn_t>(1, { h.eth.src, sm.ingress_port });
        h.eth.src = 0; // the digest has the value at the call (p4c copies its data there)
    }
    table smac {
        key = { h.eth.src: exact; }
        actions = { learn; learn_again; named; global_learn; NoAction; }
        default_action = learn();
    }
    apply {
        smac.apply();
        if (h.eth.type == 0x0801) {
            digest(3, { h.eth.type, m.b, h.eth.dst }); // expect: warning: digest: its data's type has no name: P4Info calls this digest digest_3
        } else if (h.eth.type == 0x0802) {
            digest(4, h.eth.dst); // expect: warning: digest: its data's type has no name: P4Info calls this digest digest_4
        }
    }
}
#include "../include/post.p4"
