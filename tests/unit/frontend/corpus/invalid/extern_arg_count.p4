#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    register<bit<8>>(16) r;
    apply {
        r.read(m.a); // expect: error: register.read: expected 2 arguments, got 1
    }
}
#include "../include/post.p4"
