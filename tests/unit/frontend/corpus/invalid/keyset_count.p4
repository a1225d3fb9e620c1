#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    table t {
        key = { m.a: exact; m.b: exact; }
        actions = { NoAction; }
        const entries = {
            (1, 2, 3): NoAction(); // expect: error: keyset has 3 components, expected 2
        }
    }
    apply { t.apply(); }
}
#include "../include/post.p4"
