/* aizone RTSW: the rack training switch (leaf). Hosts' NICs attach to its
 * downlinks; uplinks go to the CTSWs. Answers ARP for its gateway addresses,
 * routes IPv4/IPv6 with pin / ECMP / E-ECMP next hops, maps DSCP to classes
 * and queues, marks ECN, drops PFC frames and counts load per port and class.
 * The program is include/fabric.p4 with the RTSW profile. */
#define WITH_ARP_RESPONDER
#include "include/fabric.p4"
