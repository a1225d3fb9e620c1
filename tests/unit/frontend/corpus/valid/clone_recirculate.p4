/* clone_recirculate: ingress-to-egress clones to a mirror session,
 * resubmit and recirculate keeping user metadata marked @field_list, and
 * egress-to-egress clones, as in v1model's clone/resubmit examples. */
#include <core.p4>
#include <v1model.p4>

const bit<32> I2E_CLONE_SESSION_ID = 5;
const bit<32> E2E_CLONE_SESSION_ID = 11;

const bit<32> BMV2_V1MODEL_INSTANCE_TYPE_NORMAL        = 0;
const bit<32> BMV2_V1MODEL_INSTANCE_TYPE_INGRESS_CLONE = 1;
const bit<32> BMV2_V1MODEL_INSTANCE_TYPE_EGRESS_CLONE  = 2;
const bit<32> BMV2_V1MODEL_INSTANCE_TYPE_COALESCED     = 3;
const bit<32> BMV2_V1MODEL_INSTANCE_TYPE_RECIRC        = 4;
const bit<32> BMV2_V1MODEL_INSTANCE_TYPE_REPLICATION   = 5;
const bit<32> BMV2_V1MODEL_INSTANCE_TYPE_RESUBMIT      = 6;

#define IS_RESUBMITTED(std_meta) (std_meta.instance_type == BMV2_V1MODEL_INSTANCE_TYPE_RESUBMIT)
#define IS_RECIRCULATED(std_meta) (std_meta.instance_type == BMV2_V1MODEL_INSTANCE_TYPE_RECIRC)
#define IS_I2E_CLONE(std_meta) (std_meta.instance_type == BMV2_V1MODEL_INSTANCE_TYPE_INGRESS_CLONE)
#define IS_E2E_CLONE(std_meta) (std_meta.instance_type == BMV2_V1MODEL_INSTANCE_TYPE_EGRESS_CLONE)

const bit<8> RESUB_FL = 1;
const bit<8> RECIRC_FL = 2;
const bit<8> CLONE_FL = 3;

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header switch_to_cpu_header_t {
    bit<32> word0;
    bit<32> word1;
}

struct fwd_meta_t {
    bit<32> l2ptr;
    bit<24> out_bd;
}

struct meta_t {
    fwd_meta_t fwd;
    @field_list(RESUB_FL, CLONE_FL)
    bit<8> resubmit_reason;
    @field_list(RECIRC_FL)
    bit<8> recirculate_count;
    @field_list(CLONE_FL)
    bit<16> clone_cookie;
}

struct headers_t {
    switch_to_cpu_header_t switch_to_cpu;
    ethernet_t ethernet;
}

parser ParserImpl(packet_in packet, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control verifyChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control ingress(inout headers_t hdr, inout meta_t meta,
                inout standard_metadata_t standard_metadata) {
    action set_l2ptr(bit<32> l2ptr) {
        meta.fwd.l2ptr = l2ptr;
    }
    action do_resubmit(bit<32> new_ipv4_dstAddr) {
        hdr.ethernet.srcAddr = 0;
        meta.resubmit_reason = 1;
        resubmit_preserving_field_list(RESUB_FL);
    }
    action do_clone_i2e(bit<32> l2ptr) {
        meta.clone_cookie = 0xbeef;
        clone_preserving_field_list(CloneType.I2E, I2E_CLONE_SESSION_ID, CLONE_FL);
        meta.fwd.l2ptr = l2ptr;
    }
    action plain_clone() {
        clone(CloneType.I2E, I2E_CLONE_SESSION_ID);
    }
    table ipv4_da_lpm {
        key = {
            hdr.ethernet.dstAddr: lpm;
        }
        actions = {
            set_l2ptr;
            do_resubmit;
            do_clone_i2e;
            plain_clone;
        }
        default_action = set_l2ptr(0);
    }
    action set_bd_dmac_intf(bit<24> bd, bit<48> dmac, bit<9> intf) {
        meta.fwd.out_bd = bd;
        hdr.ethernet.dstAddr = dmac;
        standard_metadata.egress_spec = intf;
    }
    action my_drop() {
        mark_to_drop(standard_metadata);
    }
    table mac_da {
        key = {
            meta.fwd.l2ptr: exact;
        }
        actions = {
            set_bd_dmac_intf;
            my_drop;
        }
        default_action = my_drop;
    }
    apply {
        if (IS_RESUBMITTED(standard_metadata) && meta.resubmit_reason == 1) {
            hdr.ethernet.etherType = 0x0800;
        }
        ipv4_da_lpm.apply();
        if (meta.fwd.l2ptr != 0) {
            mac_da.apply();
        }
    }
}

control egress(inout headers_t hdr, inout meta_t meta,
               inout standard_metadata_t standard_metadata) {
    action rewrite_mac(bit<48> smac) {
        hdr.ethernet.srcAddr = smac;
    }
    action do_recirculate(bit<32> new_ipv4_dstAddr) {
        meta.recirculate_count = meta.recirculate_count + 1;
        recirculate_preserving_field_list(RECIRC_FL);
    }
    action do_clone_e2e(bit<48> smac) {
        hdr.ethernet.srcAddr = smac;
        clone_preserving_field_list(CloneType.E2E, E2E_CLONE_SESSION_ID, CLONE_FL);
    }
    table send_frame {
        key = {
            meta.fwd.out_bd: exact;
        }
        actions = {
            rewrite_mac;
            do_recirculate;
            do_clone_e2e;
            NoAction;
        }
        default_action = NoAction();
    }
    apply {
        if (IS_I2E_CLONE(standard_metadata) || IS_E2E_CLONE(standard_metadata)) {
            hdr.switch_to_cpu.setValid();
            hdr.switch_to_cpu.word0 = (bit<32>)meta.clone_cookie;
            hdr.switch_to_cpu.word1 = standard_metadata.instance_type;
        } else if (!IS_RECIRCULATED(standard_metadata) || meta.recirculate_count < 3) {
            send_frame.apply();
        }
        truncate(1500);
    }
}

control computeChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control DeparserImpl(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.switch_to_cpu);
        packet.emit(hdr.ethernet);
    }
}

V1Switch(ParserImpl(), verifyChecksum(), ingress(), egress(),
         computeChecksum(), DeparserImpl()) main;
