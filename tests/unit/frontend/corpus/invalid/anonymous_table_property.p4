#include "../include/pre.p4"
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    table t {
        key = { m.b: exact; h.eth.src: selector; }
        actions = { NoAction; }
        implementation = action_selector(HashAlgorithm.crc16, 32w64, 32w8); // expect: error: table 'I.t' has an anonymous table property 'implementation' with no @name annotation, which is not supported by P4Runtime
    }
    apply { t.apply(); }
}
#include "../include/post.p4"
