#include "../include/pre.p4"
control Add(inout bit<8> x, in bit<8> by) { apply { x = x + by; } }
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    Add() add;
    apply {
        add.apply(x = m.a, step = 1); // expect: error: add: no parameter named 'step'
    }
}
#include "../include/post.p4"
