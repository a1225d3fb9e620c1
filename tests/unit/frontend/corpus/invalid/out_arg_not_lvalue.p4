#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    action set(out bit<8> v) { v = 1; }
    apply {
        set(m.a + 1); // expect: error: set: argument 'v': expression is not an l-value
    }
}
#include "../include/post.p4"
