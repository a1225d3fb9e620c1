#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    action a(bit<8> x) {
        x = 1; // expect: error: assignment: cannot write to 'directionless' parameter 'x'
    }
    table t { actions = { a; } }
    apply { t.apply(); }
}
#include "../include/post.p4"
