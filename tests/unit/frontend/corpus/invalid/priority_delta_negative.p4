#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    table t {
        key = { h.eth.type: ternary; }
        actions = { NoAction; }
        priority_delta = -1; // expect: error: -1 must be a positive value
        entries = {
            0x0800: NoAction();
        }
    }
    apply { t.apply(); }
}
#include "../include/post.p4"
