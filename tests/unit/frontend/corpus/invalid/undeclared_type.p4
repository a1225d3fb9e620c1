#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply {
        nosuch_t x; // expect: error: nosuch_t: type not declared
    }
}
#include "../include/post.p4"
