#include "../include/pre.p4"
control Add(inout bit<8> x)(bit<8> by, bit<8> times = 1) { apply { x = x + by * times; } }
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    Add(times = 2) add; // expect: error: Add: expected 2 constructor arguments, got 1 (missing 'by')
    apply {
        add.apply(m.a);
    }
}
#include "../include/post.p4"
