/* Header writes the deparser must see: assignment, extern out argument, whole-header copy. */
#include <core.p4>
#include <v1model.p4>
header a_t { bit<8> x; bit<8> y; bit<16> h; }
header b_t { bit<16> p; bit<16> q; }
header c_t { bit<16> p; bit<16> q; }
struct headers_t { a_t a; b_t b; b_t b2; c_t c; }
struct meta_t { bit<8> m; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.a); pkt.extract(hdr.b); pkt.extract(hdr.b2); pkt.extract(hdr.c); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.a.x = hdr.a.x + 1;
        hash(hdr.a.h, HashAlgorithm.crc16, 16w0, { hdr.c.p }, 32w65536);
        hdr.b2 = hdr.b;
        sm.egress_spec = 2;
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
