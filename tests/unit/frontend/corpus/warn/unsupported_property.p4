#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    table t {
        key = { h.eth.dst: exact; }
        actions = { NoAction; }
        psa_empty_group_action = NoAction(); // expect: warning: Unknown table property: psa_empty_group_action
    }
    apply { t.apply(); }
}
#include "../include/post.p4"
