/* p4rt_names: what P4Info calls things. Keys named after complex
 * expressions (slices, isValid(), stack elements, a constant index, `&`, a
 * local struct, fields renamed with @name), keys and parameters whose type
 * is a `type` (through a cast, a local variable, a parameter), a control
 * passed to main by instance name, and top-level externs of which one is
 * never used. */
#include <core.p4>
#include <v1model.p4>

const bit<32> IDX = 0x1;
type bit<9> PortId_t;

header ipv4_t {
    bit<8>  ttl;
    bit<8>  protocol;
    bit<32> src_addr;
    @name("dst") bit<32> dst_addr;
}

header tag_t {
    bit<8> f;
}

struct headers {
    ipv4_t   ipv4;
    tag_t[2] stack;
}

struct pair_t {
    bit<8>  a;
    bit<16> b;
}

struct metadata {
    PortId_t port;
}

counter(8, CounterType.packets) used_counter;
counter(4, CounterType.bytes) unused_counter;
register<bit<16>>(32) unused_register;

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ipv4);
        packet.extract(hdr.stack[0]);
        packet.extract(hdr.stack[1]);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    pair_t tmp;
    PortId_t local_port;
    action set_port(PortId_t port) {
        meta.port = port;
        standard_metadata.egress_spec = (bit<9>)port;
    }
    table names {
        key = {
            hdr.ipv4.dst_addr[31:24]: exact;
            hdr.ipv4.isValid(): exact;
            hdr.stack[0].f: ternary;
            hdr.stack[IDX].f: exact;
            hdr.ipv4.protocol & 8w0xF0: ternary;
            hdr.ipv4.dst_addr: lpm;
            tmp.b: exact;
            (bit<8>)hdr.ipv4.ttl: exact @name("ttl_cast");
        }
        actions = { set_port; NoAction; }
        default_action = NoAction();
    }
    table typed_keys {
        key = {
            (PortId_t)standard_metadata.ingress_port: exact @name("in_port");
            local_port: exact;
            meta.port: exact;
        }
        actions = { set_port; NoAction; }
    }
    apply {
        tmp.a = hdr.ipv4.ttl;
        tmp.b = 16w7;
        local_port = (PortId_t)9w1;
        names.apply();
        typed_keys.apply();
        used_counter.count(0);
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        used_counter.count(1);
    }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ipv4);
        packet.emit(hdr.stack);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
