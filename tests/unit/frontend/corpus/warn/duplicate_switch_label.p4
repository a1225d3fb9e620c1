/* p4c keeps the first case silently; BMv2 1.15.5 cannot load what p4c makes of it
 * ("Duplicate entries in table initializer": tests/differential/test_constructs.py). */
#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply {
        switch (m.a) {
            1: { m.b = 1; }
            1: { m.b = 2; } // expect: warning: switch: duplicate label (an earlier case has it; this one never matches)
        }
    }
}
#include "../include/post.p4"
