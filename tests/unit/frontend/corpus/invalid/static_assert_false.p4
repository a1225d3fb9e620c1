#include "../include/pre.p4"
const bit<8> SLOTS = 3;
const bool POW2 = static_assert((SLOTS & (SLOTS - 1)) == 0, "SLOTS must be a power of 2"); // expect: error: static_assert: SLOTS must be a power of 2
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) { apply { } }
#include "../include/post.p4"
