#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply {
        m.b = m.a + m.b; // expect: error: +: cannot operate on values of different types bit<8> and bit<16>
    }
}
#include "../include/post.p4"
