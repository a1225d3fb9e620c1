/* P4-16 copy-in/copy-out (§6.8), digest timing, packet-length register and
 * deprecated resubmit(data) for the pipeline tests. Ethernet (type 0x1234)
 * then h, then h2; egress writes standard_metadata.packet_length into h2.d. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct headers_t { eth_t eth; h_t h; h_t h2; h_t extra; }
struct meta_t { bit<8> keep; bit<8> lose; }
struct dg_t { bit<8> a; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.h); pkt.extract(hdr.h2); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action bump(inout h_t x) {
        x.a = x.a + 1;
        hdr.h.b = x.a;        /* overwritten by the copy-out of x */
    }
    action probe(out h_t x) {
        hdr.h.c = x.isValid() ? 8w1 : 8w2;   /* an out header starts invalid */
    }
    apply {
        sm.egress_spec = 2;
        if (hdr.h.d == 1) {
            bump(hdr.h);
        } else if (hdr.h.d == 2) {
            probe(hdr.h2);
        } else if (hdr.h.d == 3) {
            digest<dg_t>(1, { hdr.h.a });
            hdr.h.a = 99;     /* the digest keeps a's value at the call (p4c copies it there) */
        } else if (hdr.h.d == 4) {
            hdr.extra.setValid();   /* +4 bytes in the packet-length register */
            hdr.extra.a = 7;
        } else if (hdr.h.d == 5 && sm.instance_type == 0) {
            meta.keep = 11;
            meta.lose = 22;
            resubmit({ meta.keep });
        } else if (hdr.h.d == 5) {
            hdr.h.b = meta.keep;
            hdr.h.c = meta.lose;
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { if (hdr.h2.isValid()) { hdr.h2.d = (bit<8>) sm.packet_length; } }
}
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.eth); pkt.emit(hdr.h); pkt.emit(hdr.h2); pkt.emit(hdr.extra); }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
