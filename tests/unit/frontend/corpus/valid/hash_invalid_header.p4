/* hash_invalid_header: hash() and checksum field lists naming fields of
 * headers that may be invalid (TCP ports for a UDP packet and the other way
 * round): the fields of an invalid header are left out of the input (CRCs,
 * so that leaving a field out and hashing zeros for it differ). BMv2 does
 * so for the checksums; for hash() p4c-bm2-ss copies the fields into
 * metadata first, so BMv2 hashes whatever an invalid header's fields last
 * held (deviations.py: invalid-header-fields). */
#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> etype; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> tos; bit<16> len; bit<16> id; bit<16> frag;
    bit<8> ttl; bit<8> proto; bit<16> csum; bit<32> src; bit<32> dst;
}
header tcp_t { bit<16> sport; bit<16> dport; bit<32> seq; }
header udp_t { bit<16> sport; bit<16> dport; bit<16> len; bit<16> csum; }
header out_t { bit<16> h16; bit<32> h32; bit<16> ck; bit<8> verr; }
struct headers { eth_t eth; ipv4_t ipv4; tcp_t tcp; udp_t udp; out_t res; }
struct metadata { bit<16> h16; bit<32> h32; }

parser P(packet_in pk, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.eth);
        transition select(hdr.eth.etype) { 0x0800: ipv4; default: accept; }
    }
    state ipv4 {
        pk.extract(hdr.ipv4);
        transition select(hdr.ipv4.proto) { 6: tcp; 17: udp; default: accept; }
    }
    state tcp { pk.extract(hdr.tcp); transition accept; }
    state udp { pk.extract(hdr.udp); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid(), { hdr.ipv4.src, hdr.tcp.sport, hdr.udp.dport }, hdr.ipv4.id,
                        HashAlgorithm.crc16);
    }
}
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 2;
        hash(meta.h16, HashAlgorithm.crc16, 16w0,
             { hdr.ipv4.src, hdr.ipv4.dst, hdr.ipv4.proto, hdr.tcp.sport, hdr.tcp.dport }, 16w0xffff);
        hash(meta.h32, HashAlgorithm.crc32, 32w0,
             { hdr.tcp.sport, hdr.udp.sport, hdr.eth.etype, hdr.udp.dport }, 32w0xffffffff);
        hdr.res.setValid();
        hdr.res.h16 = meta.h16;
        hdr.res.h32 = meta.h32;
        hdr.res.verr = (bit<8>)sm.checksum_error;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) {
    apply {
        update_checksum(hdr.res.isValid(), { hdr.tcp.sport, hdr.udp.sport, hdr.ipv4.src }, hdr.res.ck,
                        HashAlgorithm.crc16);
    }
}
control D(packet_out pk, in headers hdr) {
    apply { pk.emit(hdr.eth); pk.emit(hdr.ipv4); pk.emit(hdr.tcp); pk.emit(hdr.udp); pk.emit(hdr.res); }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
