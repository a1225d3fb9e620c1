#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    direct_counter(CounterType.packets) dc;
    table t { key = { m.b: exact; } actions = { NoAction; } counters = dc; }
    apply {
        t.apply();
        dc.count(); // expect: warning: direct_counter.count: called outside an action, where it does nothing
    }
}
#include "../include/post.p4"
