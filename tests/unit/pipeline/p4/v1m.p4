/* v1model behaviours for the pipeline tests. A "ctl" header (ethertype
 * 0x88b5) says what ingress/egress do; egress appends a "report" header with
 * the standard metadata it saw, so tests read them off the wire. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
header ctl_t { bit<8> op; bit<8> arg; bit<16> arg2; bit<32> val; }
header report_t {
    bit<8>  instance_type;
    bit<16> egress_rid;
    bit<16> ingress_port;
    bit<16> egress_port;
    bit<8>  parser_error;
    bit<32> packet_length;
    bit<8>  pass;
    bit<32> result;
    bit<8>  color;
    bit<8>  priority;
    bit<16> saved_port;
    bit<8>  checksum_error;
    bit<8>  ig_instance_type;
}

struct digest_t { bit<48> src; bit<9> port; }

struct meta_t {
    @field_list(1) bit<8> pass;
    bit<32> result;
    bit<8> color;
    @field_list(1) bit<16> saved_port;
    bit<8> ig_type;
}

struct headers_t { ethernet_t ethernet; ctl_t ctl; report_t report; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.type) {
            0x88b5: parse_ctl;
            default: accept;
        }
    }
    state parse_ctl { pkt.extract(hdr.ctl); transition accept; }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<32>>(16) r;
    meter(8, MeterType.packets) m;
    counter(8, CounterType.packets) ops;

    apply {
        sm.egress_spec = 2;
        meta.ig_type = (bit<8>)sm.instance_type;
        if (!hdr.ctl.isValid()) {
            return;
        }
        ops.count((bit<32>)hdr.ctl.op & 7);
        if (hdr.ctl.op == 1) {
            clone(CloneType.I2E, (bit<32>)hdr.ctl.arg);
        } else if (hdr.ctl.op == 2) {
            sm.mcast_grp = hdr.ctl.arg2;
        } else if (hdr.ctl.op == 3) {
            if (meta.pass == 0) {
                meta.pass = 1;
                meta.saved_port = (bit<16>)sm.ingress_port;
                resubmit_preserving_field_list(1);
            }
        } else if (hdr.ctl.op == 5) {
            digest<digest_t>(1, {hdr.ethernet.src, sm.ingress_port});
        } else if (hdr.ctl.op == 6) {
            truncate((bit<32>)hdr.ctl.arg);
        } else if (hdr.ctl.op == 7) {
            sm.egress_spec = 3;
            exit;
        } else if (hdr.ctl.op == 8) {
            r.write((bit<32>)hdr.ctl.arg, hdr.ctl.val);
            r.read(meta.result, (bit<32>)hdr.ctl.arg);
        } else if (hdr.ctl.op == 9) {
            hash(meta.result, HashAlgorithm.crc16, 32w0, {hdr.ethernet.dst, hdr.ctl.val}, 32w65536);
        } else if (hdr.ctl.op == 10) {
            m.execute_meter((bit<32>)hdr.ctl.arg, meta.color);
        } else if (hdr.ctl.op == 11) {
            mark_to_drop(sm);
        } else if (hdr.ctl.op == 12) {
            sm.priority = (bit<3>)hdr.ctl.arg;
        } else if (hdr.ctl.op == 16) {
            log_msg("op 16 val={}", {hdr.ctl.val});
            assert(hdr.ctl.val == 0);
        } else if (hdr.ctl.op == 13) {
            meta.pass = 7;
            clone_preserving_field_list(CloneType.I2E, (bit<32>)hdr.ctl.arg, 1);
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (hdr.ctl.isValid()) {
            if (hdr.ctl.op == 4 && meta.pass == 0) {
                meta.pass = 1;
                recirculate_preserving_field_list(1);
            } else if (hdr.ctl.op == 14 && sm.instance_type == 0) {
                clone(CloneType.E2E, (bit<32>)hdr.ctl.arg);
            } else if (hdr.ctl.op == 15) {
                mark_to_drop(sm);
            }
        }
        hdr.report.setValid();
        hdr.report.instance_type = (bit<8>)sm.instance_type;
        hdr.report.egress_rid = sm.egress_rid;
        hdr.report.ingress_port = (bit<16>)sm.ingress_port;
        hdr.report.egress_port = (bit<16>)sm.egress_port;
        hdr.report.parser_error = (bit<8>)(sm.parser_error == error.NoError ? 8w0 :
                                          (sm.parser_error == error.PacketTooShort ? 8w1 : 8w2));
        hdr.report.packet_length = sm.packet_length;
        hdr.report.pass = meta.pass;
        hdr.report.result = meta.result;
        hdr.report.color = meta.color;
        hdr.report.priority = (bit<8>)sm.priority;
        hdr.report.saved_port = meta.saved_port;
        hdr.report.checksum_error = (bit<8>)sm.checksum_error;
        hdr.report.ig_instance_type = meta.ig_type;
    }
}

control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ctl);
        pkt.emit(hdr.report);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
