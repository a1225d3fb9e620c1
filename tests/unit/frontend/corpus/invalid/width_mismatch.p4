#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply {
        m.a = m.b; // expect: error: assignment: cannot convert bit<16> to bit<8>
    }
}
#include "../include/post.p4"
