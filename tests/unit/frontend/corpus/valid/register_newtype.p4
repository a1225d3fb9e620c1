/* register_newtype: registers whose element type is a `type` (directly, via
 * a typedef, and with @p4runtime_translation) beside a plain bit<W> one. The
 * new types appear nowhere else, so type_info.new_types holds them only
 * because the registers name them. */
#include <core.p4>
#include <v1model.p4>

type bit<32> PktCount_t;
typedef PktCount_t count_alias_t;
@p4runtime_translation("example.org/Tag_t", 16)
type bit<8> Tag_t;

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etype; }
struct headers { ethernet_t eth; }
struct metadata { }

parser Prs(packet_in pkt, out headers hdr, inout metadata m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}
control VC(inout headers hdr, inout metadata m) { apply { } }

control Ing(inout headers hdr, inout metadata m, inout standard_metadata_t sm) {
    register<PktCount_t>(16) pkts;
    register<count_alias_t>(8) aliased;
    register<Tag_t>(4) tags;
    register<bit<16>>(2) plain;
    apply {
        PktCount_t c;
        pkts.read(c, (bit<32>)sm.ingress_port);
        pkts.write((bit<32>)sm.ingress_port, (PktCount_t)((bit<32>)c + 1));
        count_alias_t a;
        aliased.read(a, 0);
        tags.write(0, (Tag_t)hdr.eth.dst[7:0]);
        plain.write(1, hdr.eth.etype);
    }
}

control Egr(inout headers hdr, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata m) { apply { } }
control Dep(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); } }

V1Switch(Prs(), VC(), Ing(), Egr(), CC(), Dep()) main;
