#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    table t { key = { h.eth.dst: exact; } } // expect: error: table t: expected 'actions' property
    apply { t.apply(); }
}
#include "../include/post.p4"
