/* Per-switch settings the controller changes at run time: routing mode and hash salt. */
#ifndef AIZONE_CONFIG_P4
#define AIZONE_CONFIG_P4

#include "../header.p4"

control SwitchConfig(inout headers_t hdr, inout local_metadata_t meta) {
    /* mode: MODE_PIN / MODE_ECMP / MODE_EECMP. salt: mixed into the ECMP
     * key (control/hashing.p4) so that stacked tiers do not all pick the
     * same member for a flow. */
    action set_config(bit<2> mode, bit<32> salt) {
        meta.mode = mode;
        meta.hash_salt = salt;
    }

    /* Keyless: the controller writes its default action (not const, on
     * purpose). Until it does, the switch runs 5-tuple ECMP, salt 0. */
    table switch_config {
        key = { }
        actions = { set_config; }
        default_action = set_config(MODE_ECMP, 0);
        size = 1;
    }

    apply {
        switch_config.apply();
    }
}

#endif
