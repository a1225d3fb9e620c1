/* tuples: tuple-typed locals and constants, list expressions assigned to
 * structs and headers, tuple keysets, and tuples fed to hash(). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header pair_t {
    bit<16> a;
    bit<16> b;
}

struct flow_t {
    bit<48> src;
    bit<48> dst;
    bit<16> type;
}

struct metadata {
    flow_t  flow;
    bit<32> h;
}

struct headers {
    ethernet_t ethernet;
    pair_t     pair;
}

typedef tuple<bit<16>, bit<16>> pair_tuple_t;

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType, hdr.ethernet.dstAddr[47:40]) {
            (0x9000, 0x01 &&& 0x01): parse_pair;
            (0x9000 .. 0x90ff, _): parse_pair;
            default: accept;
        }
    }
    state parse_pair {
        packet.extract(hdr.pair);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        tuple<bit<48>, bit<48>, bit<16>> t = { hdr.ethernet.srcAddr, hdr.ethernet.dstAddr,
                                               hdr.ethernet.etherType };
        pair_tuple_t p = { 16w1, 16w2 };
        meta.flow = { hdr.ethernet.srcAddr, hdr.ethernet.dstAddr, hdr.ethernet.etherType };
        meta.flow = { src = hdr.ethernet.srcAddr, dst = hdr.ethernet.dstAddr, type = 0x800 };
        hash(meta.h, HashAlgorithm.crc32, 32w0, t, 32w0xffffffff);
        hash(meta.h, HashAlgorithm.crc32, 32w0, meta.flow, 32w0xffffffff);
        hash(meta.h, HashAlgorithm.identity, 32w0, p, 32w65536);
        if (hdr.pair.isValid()) {
            hdr.pair = { hdr.pair.b, hdr.pair.a };
        }
        standard_metadata.egress_spec = (bit<9>)meta.h[3:0];
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
        packet.emit(hdr.pair);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
