#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    table t {
        key = { h.eth.type: exact; h.eth.dst: lpm; } // expect: error: key match type does not require priorities, but some are specified
        actions = { NoAction; }
        entries = {
            priority = 2: (0x0800, _): NoAction();
            (0x86DD, _): NoAction();
        }
    }
    apply { t.apply(); }
}
#include "../include/post.p4"
