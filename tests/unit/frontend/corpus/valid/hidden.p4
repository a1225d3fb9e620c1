/* @hidden declarations: actions called directly (as ONOS fabric.p4's
 * egress_next.push_vlan), a table, a controller header field. P4Info leaves
 * them out, yet their names still shape the others' aliases: the visible
 * egress action `set_mark` is aliased `rewrite.set_mark` because a hidden
 * ingress action shares its last name. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> type;
}

header vlan_t {
    bit<16> tci;
    bit<16> type;
}

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    @hidden bit<7> pad;
}

struct headers {
    packet_in_t packet_in;
    ethernet_t ethernet;
    vlan_t vlan;
}

struct metadata {
    bit<8> mark;
}

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.type) {
            0x8100: parse_vlan;
            default: accept;
        }
    }
    state parse_vlan {
        pkt.extract(hdr.vlan);
        transition accept;
    }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    @hidden action set_mark() {
        meta.mark = 1;
    }
    action forward(bit<9> port) {
        sm.egress_spec = port;
    }
    @hidden action punt() {
        sm.egress_spec = 255;
    }
    table route {
        key = { hdr.ethernet.dst : exact; }
        actions = { forward; NoAction; }
        default_action = NoAction();
    }
    @hidden table always_mark {
        actions = { set_mark; }
        const default_action = set_mark();
    }
    apply {
        always_mark.apply();
        route.apply();
        if (hdr.ethernet.type == 0x88cc) {
            punt();
        }
    }
}

control Rewrite(inout headers hdr, inout metadata meta) {
    @hidden action push_vlan() {
        hdr.vlan.setValid();
        hdr.vlan.tci = 0;
        hdr.vlan.type = hdr.ethernet.type;
        hdr.ethernet.type = 0x8100;
    }
    action set_mark(bit<8> mark) {
        meta.mark = mark;
    }
    table marks {
        key = { hdr.ethernet.src : exact; }
        actions = { set_mark; NoAction; }
        default_action = NoAction();
    }
    apply {
        marks.apply();
        if (!hdr.vlan.isValid()) {
            push_vlan();
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    Rewrite() rewrite;
    apply {
        if (sm.egress_port == 255) {
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = sm.ingress_port;
            hdr.packet_in.pad = 0;
        } else {
            rewrite.apply(hdr, meta);
        }
    }
}

control CC(inout headers hdr, inout metadata meta) { apply { } }

control D(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr.packet_in);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.vlan);
    }
}

V1Switch(P(), VC(), MyIngress(), MyEgress(), CC(), D()) main;
