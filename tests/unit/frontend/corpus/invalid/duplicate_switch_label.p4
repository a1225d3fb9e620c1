#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply {
        switch (m.a) {
            1: { m.b = 1; }
            1: { m.b = 2; } // expect: error: switch: duplicate label
        }
    }
}
#include "../include/post.p4"
