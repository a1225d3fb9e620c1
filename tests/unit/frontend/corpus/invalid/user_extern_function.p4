#include "../include/pre.p4"
// An extern function the program declares itself: neither p4switch nor
// BMv2 (p4c-bm2-ss: "unknown extern function") has an implementation of it.
extern void count_port(in bit<9> port);
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply {
        count_port(sm.ingress_port); // expect: error: count_port: an extern function declared by the program is not supported: p4switch, like BMv2, runs only the externs of core.p4 and v1model.p4
        sm.egress_spec = 1;
    }
}
#include "../include/post.p4"
