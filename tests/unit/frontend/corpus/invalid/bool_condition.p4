#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply {
        if (m.a) { m.b = 1; } // expect: error: if condition must be bool, not bit<8>
    }
}
#include "../include/post.p4"
