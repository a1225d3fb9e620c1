#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    action set(bit<8> v) { m.a = v; }
    table t {
        key = { m.b: exact; }
        actions = { NoAction; }
        const entries = {
            1: set(2); // expect: error: entry: action set is not in the table's actions list
        }
    }
    apply { t.apply(); }
}
#include "../include/post.p4"
