/* precedence: P4-16's bitwise operators bind tighter than its comparisons
 * (unlike C's): `a & m == v` is `(a & m) == v`, `a | b != c` is
 * `(a | b) != c`, `a ^ b < c` is `(a ^ b) < c`; among themselves `&` binds
 * tighter than `^`, `^` than `|`, and the shifts tighter than all three.
 * Each outcome shows in the forwarded frame: its port and the fields written. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  tos;
    bit<16> totalLen;
    bit<16> identification;
    bit<3>  flags;
    bit<13> fragOffset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdrChecksum;
    bit<32> srcAddr;
    bit<32> dstAddr;
}

struct metadata { }

struct headers {
    ethernet_t ethernet;
    ipv4_t     ipv4;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = 1;
        if (!hdr.ipv4.isValid()) {
            return;
        }
        // (ttl & 0xf0) == 0x40: port 2 for TTLs 64..79
        if (hdr.ipv4.ttl & 8w0xf0 == 8w0x40) {
            standard_metadata.egress_spec = 2;
        }
        // (protocol & 0x0f) < 4, and (src ^ dst) != 0 on the low bytes
        bit<8> marks = 0;
        if (hdr.ipv4.protocol & 8w0x0f < 8w4) {
            marks = marks | 8w0x01;
        }
        if (hdr.ipv4.srcAddr[7:0] ^ hdr.ipv4.dstAddr[7:0] != 8w0) {
            marks = marks | 8w0x02;
        }
        // (ttl | 1) == 0x41 && (tos ^ 0x0c) >= 0x10
        if (hdr.ipv4.ttl | 8w1 == 8w0x41 && hdr.ipv4.tos ^ 8w0x0c >= 8w0x10) {
            marks = marks | 8w0x04;
        }
        // ((id >> 4) & 0x0f) > 7, and (totalLen | 0x8000) <= 0x8100
        if (hdr.ipv4.identification >> 4 & 16w0x0f > 16w7) {
            marks = marks | 8w0x08;
        }
        if (hdr.ipv4.totalLen | 16w0x8000 <= 16w0x8100) {
            marks = marks | 8w0x10;
        }
        hdr.ipv4.tos = marks;
        // id | (0x0f00 ^ (0x00ff & 0x0ff0)) = id | 0x0ff0; the shift before the &
        hdr.ipv4.identification = hdr.ipv4.identification | 16w0x0f00 ^ 16w0x00ff & 16w0x0ff0;
        hdr.ipv4.hdrChecksum = hdr.ipv4.hdrChecksum << 4 & 16w0xff00 | 16w0x0001;
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
