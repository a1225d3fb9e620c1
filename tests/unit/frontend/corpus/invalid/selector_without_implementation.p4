#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    table t { // expect: error: table t: selector keys need an action_selector implementation
        key = { m.b: exact; h.eth.src: selector; }
        actions = { NoAction; }
    }
    apply { t.apply(); }
}
#include "../include/post.p4"
