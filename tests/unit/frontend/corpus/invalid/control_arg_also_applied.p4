#include "../include/pre.p4"
control S_t(inout m_t m);
control S(inout m_t m) {
    table t { key = { m.a: exact; } actions = { NoAction; } }
    apply { t.apply(); }
}
control W(inout m_t m)(S_t inner) { apply { inner.apply(m); } }
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    S() s;
    W(s) w;
    apply {
        w.apply(m);
        s.apply(m); // expect: error: s: applying a control instance that is also passed to inner (one instance used from two blocks) is not supported
    }
}
#include "../include/post.p4"
