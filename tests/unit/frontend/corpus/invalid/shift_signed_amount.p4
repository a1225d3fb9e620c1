#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply {
        int<8> s = 1;
        m.a = m.a << s; // expect: error: '<<': shift amount must be unsigned
    }
}
#include "../include/post.p4"
