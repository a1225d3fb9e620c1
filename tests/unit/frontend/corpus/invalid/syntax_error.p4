#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply {
        m.a = ; // expect: error: syntax error, unexpected ';'
    }
}
#include "../include/post.p4"
