#include "../include/pre.p4"
type bit<9> PortId_t;
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    PortId_t port;
    apply {
        port = sm.ingress_port; // expect: error: assignment: cannot convert bit<9> to PortId_t without a cast (type PortId_t converts only to and from bit<9>, with an explicit cast)
    }
}
#include "../include/post.p4"
