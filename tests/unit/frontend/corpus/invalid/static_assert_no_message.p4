#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply {
        static_assert(V1MODEL_VERSION < 20180101); // expect: error: static_assert: assertion failed
    }
}
#include "../include/post.p4"
