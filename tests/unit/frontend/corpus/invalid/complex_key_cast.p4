#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    table t {
        key = {
            (bit<8>)h.eth.type: exact; // expect: error: (bit<8>)h.eth.type: Complex key expression requires a @name annotation
        }
        actions = { NoAction; }
    }
    apply { t.apply(); }
}
#include "../include/post.p4"
