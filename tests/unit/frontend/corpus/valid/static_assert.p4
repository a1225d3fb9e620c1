/* static_assert: core.p4's compile-time check, holding here, with and
 * without a message: initialising top-level and local constants (which
 * then decide the forwarded frame's EtherType), as a statement in a
 * function, an action and an apply block, and nested in its own argument. */
#include <core.p4>
#include <v1model.p4>

#define TAG_BITS 16
const bit<16> TAG = 0x88b5;
const bool V1_OK = static_assert(V1MODEL_VERSION >= 20180101, "v1model is older than 2018");
const bool TAG_FITS = static_assert(TAG_BITS == 16);

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct h_t { eth_t eth; }
struct m_t { }

parser P(packet_in pk, out h_t h, inout m_t m, inout standard_metadata_t sm) {
    state start { pk.extract(h.eth); transition accept; }
}

bit<16> tagged(in bit<16> t) {
    static_assert(static_assert(TAG != 0, "TAG is zero"));
    return t ^ TAG;
}

control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    const bool SMALL = static_assert(TAG_BITS <= 48, "TAG wider than a MAC");
    action mark() {
        static_assert(TAG_BITS <= 48 && TAG != 0);
        h.eth.src[15:0] = TAG;
    }
    apply {
        static_assert(true, "");
        if (V1_OK && SMALL && TAG_FITS) {
            h.eth.type = tagged(h.eth.type);
        }
        if (h.eth.dst[0:0] == 1) {
            mark();
        }
        sm.egress_spec = 2;
    }
}

control E(inout h_t h, inout m_t m, inout standard_metadata_t sm) { apply { } }
control VC(inout h_t h, inout m_t m) { apply { } }
control CC(inout h_t h, inout m_t m) { apply { } }
control D(packet_out pk, in h_t h) { apply { pk.emit(h.eth); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
