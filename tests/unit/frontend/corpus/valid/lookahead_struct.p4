/* lookahead_struct: lookahead of a struct type (assigned and in a select
 * key) and a header field of a typedef'd struct type, read, written by
 * member and assigned as a whole. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> etype; }
struct peek_t { bit<4> kind; bit<4> len; bit<8> tag; }
header opt_t { bit<4> kind; bit<4> len; bit<8> tag; bit<16> val; }
header short_t { bit<4> kind; bit<4> len; bit<8> tag; }
struct flags_t { bit<1> f0; bit<1> f1; bit<6> rest; }
typedef flags_t flags_td;
header fl_t { flags_td flags; bit<8> v; }
struct headers { eth_t eth; opt_t opt; short_t sh; fl_t fl; }
struct metadata { peek_t seen; }

parser P(packet_in pk, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.eth);
        meta.seen = pk.lookahead<peek_t>();
        transition select(meta.seen.kind, pk.lookahead<peek_t>().len) {
            (1, 4): long;
            (2, _): short;
            default: accept;
        }
    }
    state long { pk.extract(hdr.opt); transition fl; }
    state short { pk.extract(hdr.sh); transition fl; }
    state fl { pk.extract(hdr.fl); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 2;
        hdr.eth.src[7:0] = meta.seen.tag;
        if (hdr.fl.isValid()) {
            if (hdr.fl.flags.f0 == 1) { hdr.fl.v = hdr.fl.v + 1; }
            hdr.fl.flags.rest = (bit<6>)meta.seen.len;
            if (hdr.fl.flags.f1 == 1) { hdr.fl.flags = { 0, 0, 0x3f }; }
        }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pk, in headers hdr) { apply { pk.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
