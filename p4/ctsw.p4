/* aizone CTSW: the cluster training switch (spine of an AI zone). Its
 * downlinks go to the zone's RTSWs (parallel links form a bundle group), its
 * uplinks to the ATSWs. Routes IPv4/IPv6 with pin / ECMP / E-ECMP next hops,
 * maps DSCP to classes and queues, marks ECN, drops PFC frames and counts
 * load per port and class. No hosts attach: ARP is not answered.
 * The program is include/fabric.p4 with no profile define. */
#include "include/fabric.p4"
