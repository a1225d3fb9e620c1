/* More language features for the pipeline tests: header unions, a
 * sub-parser, stack push_front, header assignment and equality, serializable
 * enums, a direct meter, and a UDP checksum computed over the payload. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header a_t { bit<8> x; }
header b_t { bit<16> y; }
header_union ab_t { a_t a; b_t b; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> tos; bit<16> len; bit<16> id;
    bit<3> flags; bit<13> frag; bit<8> ttl; bit<8> proto; bit<16> csum;
    bit<32> src; bit<32> dst;
}
header udp_t { bit<16> sport; bit<16> dport; bit<16> len; bit<16> csum; }
header res_t { bit<8> union_kind; bit<8> kind; bit<8> same; bit<8> color; bit<8> miss; bit<8> flag; }

enum bit<8> Kind { A = 0x41, B = 0x42 }

struct meta_t { Kind kind; bool flag; bit<8> color; }
struct headers_t { eth_t eth; res_t res; ab_t ab; a_t[2] st; ipv4_t ipv4; udp_t udp; }

parser Sub(packet_in pkt, out ab_t u, inout meta_t meta) {
    state start {
        transition select(pkt.lookahead<bit<8>>()) {
            0xAA: pa;
            default: pb;
        }
    }
    state pa { pkt.extract(u.a); meta.kind = Kind.A; transition accept; }
    state pb { pkt.extract(u.b); meta.kind = Kind.B; transition accept; }
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    Sub() sub;
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.type) {
            0x9999: parse_u;
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_u { sub.apply(pkt, hdr.ab, meta); transition accept; }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.proto) { 17: parse_udp; default: accept; }
    }
    state parse_udp { pkt.extract(hdr.udp); transition accept; }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    direct_meter<bit<8>>(MeterType.packets) dmeter;

    action read_color() { dmeter.read(meta.color); }
    @defaultonly action nothing() { }

    table metered {
        key = { hdr.eth.src: exact; }
        actions = { read_color; @defaultonly nothing; }
        default_action = nothing();
        meters = dmeter;
    }

    apply {
        sm.egress_spec = 1;
        hdr.res.setValid();
        hdr.res.union_kind = hdr.ab.a.isValid() ? 8w1 : (hdr.ab.b.isValid() ? 8w2 : 8w0);
        hdr.res.kind = (bit<8>)meta.kind;
        if (hdr.ab.a.isValid()) {
            hdr.ab.b.setValid();
            hdr.ab.b.y = 0x1234;
        }
        if (hdr.eth.type == 0x7777) {
            hdr.st.push_front(1);
            hdr.st[0].setValid();
            hdr.st[0].x = 5;
            hdr.st[1] = hdr.st[0];
            hdr.res.same = (hdr.st[0] == hdr.st[1]) ? 8w1 : 8w0;
            hdr.st[1].x = 6;
        }
        if (metered.apply().miss) {
            hdr.res.miss = 1;
        }
        hdr.res.color = meta.color;
        meta.flag = hdr.eth.dst[0:0] == 1;
        hdr.res.flag = meta.flag ? 8w1 : 8w0;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }

control CC(inout headers_t hdr, inout meta_t meta) {
    apply {
        update_checksum_with_payload(hdr.udp.isValid(),
            { hdr.ipv4.src, hdr.ipv4.dst, 8w0, hdr.ipv4.proto, hdr.udp.len,
              hdr.udp.sport, hdr.udp.dport, hdr.udp.len, 16w0 },
            hdr.udp.csum, HashAlgorithm.csum16);
    }
}

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.eth);
        pkt.emit(hdr.res);
        pkt.emit(hdr.ab);
        pkt.emit(hdr.st);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.udp);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
