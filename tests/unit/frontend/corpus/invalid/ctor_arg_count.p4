#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    counter(16) c; // expect: error: counter: expected 2 arguments, got 1
    apply { c.count(0); }
}
#include "../include/post.p4"
