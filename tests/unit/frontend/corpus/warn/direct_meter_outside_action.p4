#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    direct_meter<bit<8>>(MeterType.packets) dm;
    table t { key = { m.b: exact; } actions = { NoAction; } meters = dm; }
    apply {
        t.apply();
        dm.read(m.a); // no warning: m.a gets the color of t's hit, as on BMv2 (p4c binds it to the meter)
    }
}
#include "../include/post.p4"
