#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    table t {
        key = { h.eth.type: ternary; }
        actions = { NoAction; }
        entries = {
            0x0800: NoAction();
        }
        largest_priority_wins = 1; // expect: error: largest_priority_wins must be a boolean expression
    }
    apply { t.apply(); }
}
#include "../include/post.p4"
