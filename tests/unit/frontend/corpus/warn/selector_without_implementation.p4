#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    table t { // expect: warning: table t: selector keys without an action_selector implementation are ignored
        key = { h.eth.src: selector; m.b: exact; } // m.b keeps match field id 2, as p4c numbers it
        actions = { NoAction; }
    }
    apply { t.apply(); }
}
#include "../include/post.p4"
