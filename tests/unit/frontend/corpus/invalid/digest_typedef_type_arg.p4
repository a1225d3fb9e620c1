#include "../include/pre.p4"
typedef bit<48> mac_t;
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply {
        digest<mac_t>(1, h.eth.src); // expect: error: digest<mac_t>: a typedef as the type argument, after which p4c names the digest; p4switch does not: give the struct itself, or no type argument
    }
}
#include "../include/post.p4"
