#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    action set(bit<8> v, bit<16> w) { m.a = v; m.b = w; }
    apply {
        set(1, w = 2); // expect: error: set: either all arguments are named or none is
    }
}
#include "../include/post.p4"
