/* names_ids: control-plane names and ids chosen in the source: @name with a
 * leading dot (global), @name on tables, actions, keys and externs, @id on
 * entities, match fields and action parameters, @brief/@description. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct metadata {
    bit<16> bd;
}

struct headers {
    ethernet_t ethernet;
}

@name(".drop_it")
action global_drop(inout standard_metadata_t sm) {
    mark_to_drop(sm);
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

@name("ingress")
control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    @id(0x01000101) @name(".set_bd")
    action set_bd(@id(7) bit<16> bd, @name("extra") bit<8> unused) {
        meta.bd = bd;
    }
    @name("fwd_to")
    action forward(bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    @brief("Port to bridge domain") @description("One entry per access port")
    @id(0x02000042)
    table port_bd {
        key = {
            standard_metadata.ingress_port: exact @name("port") @id(3);
        }
        actions = { set_bd; @defaultonly NoAction; }
        const default_action = NoAction();
    }
    @name(".l2_fwd")
    table fwd {
        key = {
            meta.bd: exact @name("bd");
            hdr.ethernet.dstAddr: exact @name("dmac");
        }
        actions = { forward; @tableonly global_drop(standard_metadata); }
        size = 4096;
    }
    @name(".port_packets") @id(0x12000001)
    counter(512, CounterType.packets) port_counter;
    apply {
        port_bd.apply();
        fwd.apply();
        port_counter.count((bit<32>)standard_metadata.ingress_port);
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
    }
}

@pkginfo(name = "names_ids.p4", version = "1.0.0")
V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
