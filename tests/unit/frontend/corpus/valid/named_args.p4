/* named_args: arguments given by parameter name, in an order other than the
 * parameters' (P4-16 §8.21): main's V1Switch, a sub-control's constructor and
 * apply, an action (called, as a default action and in const entries), a
 * function and an extern's constructor and method. The values land in the
 * forwarded frame's source MAC and EtherType, so a binding by position would
 * show in the output. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct h_t { eth_t eth; }
struct m_t { bit<8> hi; bit<8> lo; }

parser P(packet_in pk, out h_t h, inout m_t m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr = h.eth); transition accept; }
}

bit<16> mix(in bit<8> high, in bit<8> low) {
    return high ++ low;
}

control Split(in bit<48> from, out bit<8> first, out bit<8> second)(bit<8> salt) {
    apply {
        first = from[47:40] ^ salt;
        second = from[7:0];
    }
}

control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    Split(salt = 8w0x5a) split;
    register<bit<8>>(size = 32w4) last;
    action stamp(bit<8> a, bit<8> b) {
        h.eth.src[15:0] = a ++ b;
    }
    table pick {
        key = { h.eth.dst : exact; }
        actions = { stamp; NoAction; }
        const default_action = stamp(b = 8w0x01, a = 8w0x02);
    }
    table low_bits {
        key = { h.eth.dst[1:0] : exact @name("dst_low"); }
        actions = { stamp; NoAction; }
        const entries = {
            0 : stamp(b = 8w0x03, a = 8w0x04);
            1 : stamp(a = 8w0x05, b = 8w0x06);
        }
        const default_action = NoAction();
    }
    apply {
        split.apply(second = m.lo, from = h.eth.dst, first = m.hi);
        h.eth.type = mix(low = m.hi, high = m.lo);
        pick.apply();
        low_bits.apply();
        if (h.eth.dst[2:2] == 1) {
            stamp(b = m.lo, a = m.hi);
        }
        last.write(value = m.hi, index = (bit<32>)h.eth.dst[1:0]);
        sm.egress_spec = 2;
    }
}

control E(inout h_t h, inout m_t m, inout standard_metadata_t sm) { apply { } }
control VC(inout h_t h, inout m_t m) { apply { } }
control CC(inout h_t h, inout m_t m) { apply { } }
control D(packet_out pk, in h_t h) { apply { pk.emit(hdr = h.eth); } }

V1Switch(dep = D(), ck = CC(), eg = E(), ig = I(), vr = VC(), p = P()) main;
