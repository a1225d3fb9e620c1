#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply { m.a = nosuch; } // expect: error: nosuch: declaration not found
}
#include "../include/post.p4"
