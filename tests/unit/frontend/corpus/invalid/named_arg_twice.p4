#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    action set(bit<8> v, bit<16> w) { m.a = v; m.b = w; }
    apply {
        set(v = 1, w = 2, v = 3); // expect: error: set: parameter 'v' given twice
    }
}
#include "../include/post.p4"
