#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply {
        bit<8> x = 1;
        bit<16> x = 2; // expect: error: x: duplicate declaration
    }
}
#include "../include/post.p4"
