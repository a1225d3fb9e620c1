/* aizone ATSW: the aggregator training switch joining the CTSWs of several
 * AI zones. Routes each zone's prefix to that zone's CTSWs (ECMP / E-ECMP
 * over the bundle), maps DSCP to classes and queues, marks ECN, drops PFC
 * frames and counts load per port and class. No hosts attach: ARP is not
 * answered. The program is include/fabric.p4 with no profile define (the
 * same pipeline as the CTSW; the controller gives it other routes). */
#include "include/fabric.p4"
