#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply {
        mark_to_drop(sm, sm); // expect: error: mark_to_drop: expected 0 or 1 arguments, got 2
    }
}
#include "../include/post.p4"
