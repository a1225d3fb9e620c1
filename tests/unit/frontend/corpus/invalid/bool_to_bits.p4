#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply {
        m.a = true; // expect: error: assignment: cannot convert bool to bit<8>
    }
}
#include "../include/post.p4"
