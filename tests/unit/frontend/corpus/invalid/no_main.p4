#include <core.p4> // expect: error: program has no 'main' instance (V1Switch(...) main;)
#include <v1model.p4>
header eth_t { bit<48> dst; }
