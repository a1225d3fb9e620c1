V1Switch(P(), VC(), I(), E(), CC(), D()) main;
