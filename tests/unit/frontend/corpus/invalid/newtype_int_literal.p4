#include "../include/pre.p4"
type bit<16> Tag_t;
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    Tag_t tag;
    apply {
        tag = 5; // expect: error: assignment: cannot convert int to Tag_t without a cast (type Tag_t converts only to and from bit<16>, with an explicit cast)
    }
}
#include "../include/post.p4"
