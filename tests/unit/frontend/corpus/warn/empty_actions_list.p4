#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    // no warning: an empty list leaves the table NoAction only (@defaultonly, its default), as in p4c
    table t { key = { h.eth.dst: exact; } actions = { } }
    apply { t.apply(); }
}
#include "../include/post.p4"
