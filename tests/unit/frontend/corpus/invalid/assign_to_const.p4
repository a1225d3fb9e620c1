#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    const bit<8> LIMIT = 10;
    apply {
        LIMIT = 3; // expect: error: assignment: cannot write to constant 'LIMIT'
    }
}
#include "../include/post.p4"
