#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    action a() { }
    table t {
        key = { h.eth.dst: exact; }
        actions = { NoAction; }
        default_action = a(); // expect: error: default_action: action a is not in the table's actions list
    }
    apply { t.apply(); }
}
#include "../include/post.p4"
