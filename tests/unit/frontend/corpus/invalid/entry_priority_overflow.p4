#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    table t { // expect: error: table t: Overflow in priority computation
        key = { h.eth.type: ternary; }
        actions = { NoAction; }
        entries = {
            priority = 1: 0x0800: NoAction();
            0x86DD: NoAction();
        }
    }
    apply { t.apply(); }
}
#include "../include/post.p4"
