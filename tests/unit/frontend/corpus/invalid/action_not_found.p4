#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    table t {
        actions = { NoAction; nosuch; } // expect: error: nosuch: not an action
    }
    apply { t.apply(); }
}
#include "../include/post.p4"
