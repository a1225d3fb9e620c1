#include "../include/pre.p4"
// An extern object type the program declares itself, instantiated.
extern Tally {
    Tally(bit<32> size);
    void add(in bit<32> index);
}
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    Tally(32w8) tally; // expect: error: Tally: an extern type declared by the program is not supported: p4switch, like BMv2, runs only the externs of core.p4 and v1model.p4
    apply {
        tally.add((bit<32>)sm.ingress_port);
    }
}
#include "../include/post.p4"
