#include "../include/pre.p4"
type bit<9> PortId_t;
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    action fwd(PortId_t port) {
        sm.egress_spec = port; // expect: error: assignment: cannot convert PortId_t to bit<9> without a cast (type PortId_t converts only to and from bit<9>, with an explicit cast)
    }
    apply { fwd((PortId_t)9w1); }
}
#include "../include/post.p4"
