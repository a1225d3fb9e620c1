#include "../include/pre.p4"
control Add(inout bit<8> x, in bit<8> by = 1) { apply { x = x + by; } }
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    Add() add;
    apply {
        add.apply(by = 2); // expect: error: add: expected 2 arguments, got 1 (missing 'x')
    }
}
#include "../include/post.p4"
