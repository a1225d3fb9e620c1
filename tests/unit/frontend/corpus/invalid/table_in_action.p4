#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    table t { actions = { NoAction; } }
    action a() {
        t.apply(); // expect: error: tables cannot be applied from an action
    }
    apply { a(); }
}
#include "../include/post.p4"
