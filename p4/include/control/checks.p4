/* Admission checks every role runs first: what must never be forwarded. */
#ifndef AIZONE_CHECKS_P4
#define AIZONE_CHECKS_P4

#include "../header.p4"

/* Sets meta.drop_reason for a packet the switch must not forward, in this
 * order: a parser error (a truncated header), a MAC control frame (PFC or
 * PAUSE: link-local by definition; a PFC frame on a port that honours them
 * is taken back by control/pfc.p4, and with p4switch's native PFC never
 * reaches the pipeline; anything else ends here and is counted),
 * an IPv4 header with options (their checksum would not be kept right when
 * the TTL changes), a bad IPv4 header checksum. */
control IngressChecks(inout headers_t hdr,
                      inout local_metadata_t meta,
                      inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.parser_error != error.NoError) {
            meta.drop_reason = DROP_PARSER;
        } else if (meta.mac_control) {
            meta.drop_reason = DROP_PFC_FRAME;
        } else if (hdr.ipv4.isValid() && hdr.ipv4.ihl != 5) {
            meta.drop_reason = DROP_PARSER;
        } else if (standard_metadata.checksum_error == 1) {
            meta.drop_reason = DROP_CHECKSUM;
        }
    }
}

#endif
