#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply {
        h.eth = { 1, 2 }; // expect: error: expression: 2 values for 3 fields of eth_t
    }
}
#include "../include/post.p4"
