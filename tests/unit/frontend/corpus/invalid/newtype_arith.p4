#include "../include/pre.p4"
type bit<16> Tag_t;
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    Tag_t tag;
    apply {
        tag = (Tag_t)m.b;
        m.b = (bit<16>)(tag + (Tag_t)16w1); // expect: error: '+': operand of type Tag_t is not a number
    }
}
#include "../include/post.p4"
