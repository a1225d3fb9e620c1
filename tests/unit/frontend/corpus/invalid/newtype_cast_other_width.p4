#include "../include/pre.p4"
type bit<9> PortId_t;
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply {
        PortId_t p = (PortId_t)m.b; // expect: error: illegal cast from bit<16> to PortId_t (type PortId_t converts only to and from bit<9>, with an explicit cast)
    }
}
#include "../include/post.p4"
