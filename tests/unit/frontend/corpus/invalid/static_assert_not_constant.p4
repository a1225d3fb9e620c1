#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply {
        static_assert(h.eth.isValid(), "no frame"); // expect: error: static_assert: the condition must be a compile-time constant
    }
}
#include "../include/post.p4"
