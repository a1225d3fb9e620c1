/* enum_keys: serializable enums as header fields, table keys, action data
 * and select labels; a plain enum as action data and in a switch. */
#include <core.p4>
#include <v1model.p4>

enum bit<16> EtherType {
    IPV4 = 0x0800,
    ARP  = 0x0806,
    VLAN = 0x8100,
    IPV6 = 0x86dd
}

enum bit<8> Verdict {
    PASS = 1,
    DROP = 2,
    PUNT = 3
}

enum Color { GREEN, YELLOW, RED }

header ethernet_t {
    bit<48>   dstAddr;
    bit<48>   srcAddr;
    EtherType etherType;
}

struct metadata {
    Verdict verdict;
    Color   color;
}

struct headers {
    ethernet_t ethernet;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            EtherType.IPV4: accept;
            EtherType.IPV6: accept;
            EtherType.ARP: accept;
            default: reject;
        }
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action set_verdict(Verdict v) {
        meta.verdict = v;
    }
    action set_color(Color c) {
        meta.color = c;
    }
    table classify {
        key = {
            hdr.ethernet.etherType: exact;
            standard_metadata.ingress_port: ternary;
        }
        actions = { set_verdict; set_color; NoAction; }
        default_action = set_verdict(Verdict.PASS);
        const entries = {
            (EtherType.ARP, _): set_verdict(Verdict.PUNT);
            (EtherType.VLAN, 9w1 &&& 9w1): set_verdict(Verdict.DROP);
        }
    }
    table by_color {
        key = { meta.verdict: exact; }
        actions = { set_color; }
        default_action = set_color(Color.GREEN);
    }
    apply {
        meta.color = Color.GREEN;
        classify.apply();
        by_color.apply();
        switch (meta.color) {
            Color.RED: { meta.verdict = Verdict.DROP; }
            Color.YELLOW:
            Color.GREEN: { }
        }
        if (meta.verdict == Verdict.DROP) {
            mark_to_drop(standard_metadata);
        } else if ((bit<8>)meta.verdict == 3) {
            standard_metadata.egress_spec = 255;
        }
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

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
