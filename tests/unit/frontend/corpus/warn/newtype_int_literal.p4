#include "../include/pre.p4"
type bit<16> Tag_t;
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    Tag_t tag;
    apply {
        tag = 5; // no warning: p4c converts the literal as a cast would
    }
}
#include "../include/post.p4"
