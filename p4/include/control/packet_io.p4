/* Packet-out from and packet-in to the controller through the CPU port. */
#ifndef AIZONE_PACKET_IO_P4
#define AIZONE_PACKET_IO_P4

#include "../header.p4"

control PacketIoIngress(inout headers_t hdr,
                        inout local_metadata_t meta,
                        inout standard_metadata_t standard_metadata) {
    apply {
        /* A packet-out is sent as it is, out of the port the controller names,
         * in the control class (QosIngress), so that the controller's link
         * probes do not wait behind data under strict priority. */
        standard_metadata.egress_spec = hdr.packet_out.egress_port;
        hdr.packet_out.setInvalid();
        meta.from_cpu = true;
    }
}

control PacketIoEgress(inout headers_t hdr,
                       inout local_metadata_t meta,
                       inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.egress_port == CPU_PORT) {
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = standard_metadata.ingress_port;
            hdr.packet_in._pad = 0;
        }
    }
}

#endif
