/* A control instantiated at the top level and passed to main by name: P4-16
 * instantiates parsers and controls only inside blocks or in main's
 * arguments, and p4c refuses it with these words. */
#include <core.p4>
#include <v1model.p4>

struct headers {}
struct metadata {}

parser P(packet_in b, out headers h, inout metadata m, inout standard_metadata_t s) {
    state start { transition accept; }
}
control VC(inout headers h, inout metadata m) { apply {} }
control I(inout headers h, inout metadata m, inout standard_metadata_t s) { apply {} }
control E(inout headers h, inout metadata m, inout standard_metadata_t s) { apply {} }
control CC(inout headers h, inout metadata m) { apply {} }
control D(packet_out b, in headers h) { apply {} }

I() ingress_instance; // expect: error: ingress_instance: cannot instantiate at top-level

V1Switch(P(), VC(), ingress_instance, E(), CC(), D()) main;
