#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    action a(in bit<8> x) {
        x = 1; // expect: error: assignment: cannot write to 'in' parameter 'x'
    }
    apply { a(m.a); }
}
#include "../include/post.p4"
