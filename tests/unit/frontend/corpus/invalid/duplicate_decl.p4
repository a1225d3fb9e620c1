#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    action a() { }
    action a() { } // expect: error: a: duplicate declaration
    apply { }
}
#include "../include/post.p4"
