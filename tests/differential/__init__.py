"""p4switch held to BMv2 simple_switch_grpc: the same program, writes and packets on both (see conftest.py)."""
