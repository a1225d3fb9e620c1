#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply {
        h.eth.nope = 1; // expect: error: nope: field not found in eth_t
    }
}
#include "../include/post.p4"
