#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    action a() {
        return 1; // expect: error: return with a value outside a function returning a value
    }
    apply { a(); }
}
#include "../include/post.p4"
