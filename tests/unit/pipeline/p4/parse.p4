/* Parser and control-flow features for the pipeline tests. Ingress writes an
 * "res" header (emitted right after ethernet) describing what it saw. */
#include <core.p4>
#include <v1model.p4>

error { BadIhl }

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header mpls_t { bit<20> label; bit<3> tc; bit<1> bos; bit<8> ttl; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> tos; bit<16> len; bit<16> id;
    bit<3> flags; bit<13> frag; bit<8> ttl; bit<8> proto; bit<16> csum;
    bit<32> src; bit<32> dst;
}
header ipv4_opt_t { varbit<320> options; }
header res_t {
    bit<8> path; bit<8> nlabels; bit<32> info; bit<16> err;
    bit<8> misc1; bit<8> misc2; bit<16> misc3;
}

struct headers_t { eth_t eth; res_t res; mpls_t[3] mpls; ipv4_t ipv4; ipv4_opt_t opt; }
struct meta_t { bit<8> path; bit<8> nlabels; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    value_set<bit<16>>(4) vs;

    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.type) {
            0x8847: parse_mpls;
            0x0800: parse_ipv4;
            0x9000 &&& 0xF000: parse_masked;
            0x1000 .. 0x1FFF: parse_range;
            vs: parse_vs;
            default: accept;
        }
    }
    state parse_mpls {
        pkt.extract(hdr.mpls.next);
        meta.nlabels = meta.nlabels + 1;
        transition select(hdr.mpls.last.bos) {
            0: parse_mpls;
            1: parse_after_mpls;
        }
    }
    state parse_after_mpls {
        transition select(pkt.lookahead<bit<4>>()) {
            4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        verify(hdr.ipv4.ihl >= 5, error.BadIhl);
        pkt.extract(hdr.opt, (bit<32>)(hdr.ipv4.ihl - 5) * 32);
        meta.path = 1;
        transition accept;
    }
    state parse_masked { meta.path = 3; transition accept; }
    state parse_range { meta.path = 4; pkt.advance(16); transition accept; }
    state parse_vs { meta.path = 5; transition reject; }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

bit<8> twice(in bit<8> x) { return x + x; }

control Adder(inout bit<32> v, in bit<32> d) {
    apply { v = v + d; }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    Adder() adder;
    bit<32> acc = 0;

    action set_info(bit<32> info) { hdr.res.info = info; }
    action set_misc(bit<8> m) { hdr.res.misc1 = m; }

    table classify {
        key = {
            hdr.eth.src[7:0]: ternary @name("src_lo");
            hdr.eth.dst[15:0]: range @name("dst_lo");
        }
        actions = { set_info; NoAction; }
        default_action = NoAction();
    }

    table consts {
        key = { hdr.eth.type: ternary; }
        actions = { set_misc; }
        const entries = {
            0x0800 &&& 0xFFFF: set_misc(1);
            0x8800 &&& 0xFF00: set_misc(2);
            _: set_misc(3);
        }
        default_action = set_misc(0);
    }

    apply {
        sm.egress_spec = 1;
        hdr.res.setValid();
        hdr.res.path = meta.path;
        hdr.res.nlabels = meta.nlabels;
        if (sm.parser_error == error.NoError) { hdr.res.err = 0; }
        else if (sm.parser_error == error.PacketTooShort) { hdr.res.err = 1; }
        else if (sm.parser_error == error.NoMatch) { hdr.res.err = 2; }
        else if (sm.parser_error == error.StackOutOfBounds) { hdr.res.err = 3; }
        else if (sm.parser_error == error.HeaderTooShort) { hdr.res.err = 4; }
        else if (sm.parser_error == error.BadIhl) { hdr.res.err = 9; }
        else { hdr.res.err = 0xFFFF; }

        switch (classify.apply().action_run) {
            set_info: { hdr.res.path = hdr.res.path | 0x80; }
            default: { }
        }
        consts.apply();

        if (hdr.eth.type == 0x0801) {
            /* arithmetic corner cases, reported in misc2/misc3/info */
            bit<8> s = 8w250 |+| 8w10;
            bit<8> d = 8w5 |-| 8w10;
            int<8> neg = -5;
            hdr.res.misc2 = s ^ d ^ twice(3);
            hdr.res.misc3 = (bit<16>)((bit<8>)neg ++ 8w0x12);
            acc = 40;
            adder.apply(acc, 2);
            hdr.res.info = acc;
            hdr.res.info[31:24] = 8w0xAB;
            switch (hdr.eth.src[7:0]) {
                1: { hdr.res.path = 11; }
                2:
                3: { hdr.res.path = 23; }
                default: { hdr.res.path = 99; }
            }
        }
        if (hdr.mpls[0].isValid()) {
            hdr.mpls[0].ttl = hdr.mpls[0].ttl - 1;
            if (hdr.mpls[1].isValid()) {
                hdr.mpls.pop_front(1);
            }
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.eth);
        pkt.emit(hdr.res);
        pkt.emit(hdr.mpls);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.opt);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
