#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply {
        m.a = h.eth.type[16:9]; // expect: error: slice [16:9] out of range for bit<16>
    }
}
#include "../include/post.p4"
