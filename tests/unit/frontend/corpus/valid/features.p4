/* Many language features at once: stacks, unions, varbit, enums, value sets,
 * sub-parsers, nested controls, selectors, meters, registers, digests,
 * const entries, switch, functions, slices, casts, concatenation. */
#include <core.p4>
#include <v1model.p4>

typedef bit<48> mac_t;
type bit<32> ip_t;
const bit<16> ETH_IPV4 = 16w0x0800;
#define MAX_LABELS 3

enum bit<8> Proto { TCP = 6, UDP = 17 }
enum Color { RED, GREEN }
error { BadVersion }

header eth_t { mac_t dst; mac_t src; bit<16> type; }
header mpls_t { bit<20> label; bit<3> tc; bit<1> bos; bit<8> ttl; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> tos; bit<16> len; bit<16> id; bit<3> flags;
    bit<13> frag; bit<8> ttl; bit<8> proto; bit<16> csum; bit<32> src; bit<32> dst;
}
header opts_t { varbit<320> data; }
header a_t { bit<8> x; }
header b_t { bit<16> y; }
header_union ab_t { a_t a; b_t b; }
@controller_header("packet_in")
header cpu_in_t { bit<9> port; bit<7> pad; }

struct learn_t { mac_t src; bit<9> port; }
struct meta_t { bit<16> l4; bit<8> color; Color c; bit<32> h; bool flag; }
struct hdrs_t { cpu_in_t cpu; eth_t eth; mpls_t[MAX_LABELS] mpls; ipv4_t ipv4; opts_t opts; ab_t ab; }

bit<16> add16(in bit<16> a, in bit<16> b) { return a + b; }

parser Sub(packet_in pk, inout hdrs_t h) {
    state start { pk.extract(h.ab.a); transition accept; }
}

parser P(packet_in pk, out hdrs_t h, inout meta_t m, inout standard_metadata_t sm) {
    value_set<bit<16>>(4) vs;
    Sub() sub;
    state start {
        pk.extract(h.eth);
        transition select(h.eth.type) {
            ETH_IPV4: parse_ipv4;
            0x8847: parse_mpls;
            vs: parse_sub;
            0x9000 &&& 0xF000: accept;
            0x1000 .. 0x1FFF: reject;
            default: accept;
        }
    }
    state parse_sub { sub.apply(pk, h); transition accept; }
    state parse_mpls {
        pk.extract(h.mpls.next);
        transition select(h.mpls.last.bos) { 0: parse_mpls; 1: parse_ipv4; }
    }
    state parse_ipv4 {
        pk.extract(h.ipv4);
        verify(h.ipv4.version == 4, error.BadVersion);
        bit<4> nib = pk.lookahead<bit<4>>();
        pk.extract(h.opts, (bit<32>)(((bit<16>)h.ipv4.ihl - 5) * 32));
        transition select(h.ipv4.proto, h.ipv4.frag) {
            (Proto.TCP, 0): accept;
            (_, _): accept;
        }
    }
}

control Inner(inout hdrs_t h, in bit<8> v) {
    counter(32w16, CounterType.packets_and_bytes) cnt;
    action bump() { cnt.count((bit<32>)v); }
    table inner_t { key = { h.eth.dst: exact; } actions = { bump; NoAction; } default_action = NoAction(); }
    apply { inner_t.apply(); }
}

control Ing(inout hdrs_t h, inout meta_t m, inout standard_metadata_t sm) {
    direct_counter(CounterType.packets) dc;
    meter(32w64, MeterType.bytes) mtr;
    direct_meter<bit<8>>(MeterType.packets) dm;
    register<bit<32>>(1024) reg;
    action_selector(HashAlgorithm.crc16, 32w1024, 32w14) sel;
    Inner() inner;
    bit<32> tmp = 0;

    action set_port(bit<9> port) { sm.egress_spec = port; }
    action drop() { mark_to_drop(sm); }
    action metered(bit<32> idx) { mtr.execute_meter(idx, m.color); }
    action dmeter() { dm.read(m.color); }
    action learn() { digest<learn_t>(1, {h.eth.src, sm.ingress_port}); }
    action rw(inout bit<8> t) { t = t - 1; }

    table l2 {
        key = { h.eth.dst: exact @name("dst_mac"); h.eth.type: ternary; }
        actions = { set_port; drop; @defaultonly learn; }
        counters = dc;
        const default_action = learn();
        size = 4096;
    }
    table ecmp {
        key = { h.ipv4.dst: lpm; h.ipv4.src: selector; h.ipv4.proto: selector; }
        actions = { set_port; }
        implementation = sel;
    }
    table acl {
        key = { h.ipv4.src: ternary; h.ipv4.proto: range; m.flag: exact; h.ipv4.isValid(): exact; }
        actions = { drop; NoAction; dmeter; }
        meters = dm;
        const entries = {
            (0x0A000000 &&& 0xFF000000, 6 .. 17, true, true): drop();
            (_, _, false, true): NoAction();
            (32w1, 1, true, false): NoAction() @priority(3);
        }
        default_action = NoAction();
    }
    table t_timeout {
        key = { sm.ingress_port: exact; }
        actions = { metered; }
        support_timeout = true;
        default_action = metered(0);
    }

    apply {
        bit<16> s = add16(h.ipv4.len, 16w20);
        hash(m.h, HashAlgorithm.crc32, 32w0, {h.ipv4.src, h.ipv4.dst, h.ipv4.proto}, 32w65536);
        reg.read(tmp, 32w5);
        reg.write(5, tmp |+| 1);
        switch (l2.apply().action_run) {
            set_port: { ecmp.apply(); }
            drop:
            learn: { exit; }
        }
        if (acl.apply().hit) { sm.priority = 3w7; } else if (!t_timeout.apply().miss) { return; }
        h.eth.src[7:0] = h.eth.dst[47:40];
        h.ipv4.ttl = h.ipv4.ttl - 1;
        rw(h.ipv4.ttl);
        m.l4 = h.ipv4.src[31:24] ++ 8w0;
        m.l4 = m.l4 << 2 >> 1;
        m.flag = h.ipv4.ttl > 8w1 ? true : false;
        if (h.mpls[0].isValid() && !h.mpls[1].isValid()) { h.mpls.pop_front(1); }
        h.ab.b.setValid();
        m.c = Color.GREEN;
        switch (m.color) { 0: { m.color = 1; } default: { } }
        if (h.ipv4.proto == Proto.TCP) { m.l4 = (bit<16>)(bit<8>)Proto.UDP; }
        inner.apply(h, 8w3);
        int<8> neg = -8s1;
        h.ipv4.tos = (bit<8>)neg;
        log_msg("ttl={}", {h.ipv4.ttl});
    }
}

control Eg(inout hdrs_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (sm.egress_port == 255) { h.cpu.setValid(); h.cpu.port = sm.ingress_port; }
        truncate(64);
    }
}
control VC(inout hdrs_t h, inout meta_t m) {
    apply { verify_checksum(h.ipv4.isValid(), {h.ipv4.version, h.ipv4.ihl}, h.ipv4.csum, HashAlgorithm.csum16); }
}
control CC(inout hdrs_t h, inout meta_t m) {
    apply { update_checksum(h.ipv4.isValid(), {h.ipv4.version, h.ipv4.ihl}, h.ipv4.csum, HashAlgorithm.csum16); }
}
control D(packet_out pk, in hdrs_t h) {
    apply { pk.emit(h.cpu); pk.emit(h.eth); pk.emit(h.mpls); pk.emit(h.ipv4); pk.emit(h.ab); }
}

V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
