#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    table t {
        key = { h.eth.type: ternary; }
        actions = { NoAction; }
        const entries = {
            0x0800: NoAction();
            priority = 5: 0x86DD: NoAction(); // expect: error: Table with 'const' entries cannot have priorities
        }
    }
    apply { t.apply(); }
}
#include "../include/post.p4"
