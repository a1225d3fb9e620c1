"""p4runtime-shell on finsy's modern protos: `python -m p4switch.server.p4rt_shell ARGS`.

p4runtime-shell 0.0.6 imports the reference bindings (`p4.v1.p4runtime_pb2`,
`p4.config.v1.p4info_pb2`, ...), whose PyPI package does not load under the
protobuf aizone uses. This launcher aliases those names to finsy's modules
(`p4switch.proto.alias_p4_modules`) and then runs p4runtime-shell's own
`main()` with the same arguments, e.g.

    python -m p4switch.server.p4rt_shell --grpc-addr 127.0.0.1:9559 \\
        --device-id 1 --election-id 0,1 --config prog.p4info.txtpb,prog.json

In a program, call `alias_p4_modules()` before `import p4runtime_sh.shell`.
p4runtime-shell is installed without its stale pins (see README):
`pip install --no-deps p4runtime-shell==0.0.6` next to `pip install -e '.[shell]'`.

Names defined here: `main`.
"""

from __future__ import annotations

import sys

from p4switch.proto import alias_p4_modules


def main(argv: list[str] | None = None) -> int:
    """Run p4runtime-shell with `argv` on finsy's protos; returns the exit status."""
    alias_p4_modules()
    try:
        from p4runtime_sh import shell
    except ImportError as e:
        print(f"p4rt_shell: p4runtime-shell is not installed ({e}); "
              "run: pip install --no-deps p4runtime-shell==0.0.6", file=sys.stderr)
        return 2
    sys.argv = ["p4runtime-sh", *(sys.argv[1:] if argv is None else argv)]
    shell.main()
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["main"]
