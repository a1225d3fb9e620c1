/* The ECMP key: which fields a flow is spread by, per routing mode, salted per switch. */
#ifndef AIZONE_HASHING_P4
#define AIZONE_HASHING_P4

#include "../header.p4"

/* meta.ecmp_key, the only field the next_hop selector hashes; the member
 * is crc16(ecmp_key) % (number of members), members in the order they were
 * created (BMv2's member handles):
 *
 *   flow = crc32(src, dst, proto, l4 src port, l4 dst port, qp) % 0xFFFFFFFF
 *          fields packed MSB first, 40 bytes: addresses as bit<128> (IPv4
 *          zero-extended on the left), proto bit<8>, ports bit<16>, qp bit<24>
 *   ecmp_key = (flow ^ salt) * ECMP_MIX      (mod 2^32)
 *
 * by mode: ecmp: qp = 0; eecmp: qp = the BTH destination QP of RoCEv2
 * packets, 0 for others (they fall back to the 5-tuple); pin: only the
 * destination address (everything else 0), so a destination's packets all
 * take one path and no flow is spread (the controller pins with one-member
 * next hops; a group reached in pin mode is chosen by destination).
 *
 * Why the multiply: CRCs are affine over GF(2), so a salt XORed in (or fed
 * as one more hash field) changes every flow's hash by the same constant;
 * with 2^k members that only relabels the members, and stacked tiers stay
 * polarised. The carry chains of the multiplication make flows that share
 * a member under one salt independent under another. */
control EcmpHash(inout headers_t hdr, inout local_metadata_t meta) {
    apply {
        bit<128> src = 0;
        bit<128> dst = 0;
        bit<8>   proto = 0;
        bit<16>  sport = 0;
        bit<16>  dport = 0;
        qp_t     qp = 0;
        if (hdr.ipv4.isValid()) {
            dst = (bit<128>) hdr.ipv4.dst_addr;
            src = (bit<128>) hdr.ipv4.src_addr;
        } else if (hdr.ipv6.isValid()) {
            dst = hdr.ipv6.dst_addr;
            src = hdr.ipv6.src_addr;
        }
        if (meta.mode == MODE_PIN) {
            src = 0;
        } else {
            proto = meta.ip_proto;
            sport = meta.l4_src_port;
            dport = meta.l4_dst_port;
            if (meta.mode == MODE_EECMP && hdr.bth.isValid()) {
                qp = hdr.bth.dest_qp;
            }
        }
        bit<32> flow;
        hash(flow, HashAlgorithm.crc32, 32w0, { src, dst, proto, sport, dport, qp },
             32w0xFFFFFFFF);
        meta.ecmp_key = (flow ^ meta.hash_salt) * ECMP_MIX;
    }
}

#endif
