#include "../include/pre.p4"
type bit<9> PortId_t;
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply {
        PortId_t p = (PortId_t)sm.ingress_port;
        if (p == 1) { // expect: error: '==': cannot compare PortId_t and int
            mark_to_drop(sm);
        }
    }
}
#include "../include/post.p4"
