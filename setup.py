"""Build step of aizone beyond pyproject.toml: p4switch's two native modules.

`p4switch/rawio.c` (no library but Python's) becomes `p4switch._rawio`, the
ports' batched I/O (recvmmsg to receive, sendmmsg to send); without a C
compiler the install still succeeds and the ports receive and send one frame
per call in Python.

`p4switch/server/native.cc` is compiled against the system's gRPC C++
library (Debian: libgrpc++-dev, found with pkg-config) into
`p4switch.server._native`. It is optional: without the library the install
still succeeds and p4switch serves P4Runtime with grpcio's server instead
(slower one-update writes; `p4switch --help` says which transport runs).
"""

import subprocess
import sys

from setuptools import Extension, setup


def grpc_flags() -> tuple[list[str], list[str]] | None:
    try:
        cflags = subprocess.run(["pkg-config", "--cflags", "grpc++"], capture_output=True, text=True,
                                check=True).stdout.split()
        libs = subprocess.run(["pkg-config", "--libs", "grpc++"], capture_output=True, text=True,
                              check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return None
    return cflags, libs


flags = grpc_flags()
extensions = [Extension("p4switch._rawio", sources=["p4switch/rawio.c"],
                        extra_compile_args=["-O2"], optional=True)]
if flags is None:
    print("aizone: gRPC C++ (pkg-config grpc++) not found: building without the native P4Runtime transport",
          file=sys.stderr)
else:
    cflags, libs = flags
    extensions.append(Extension(
        "p4switch.server._native",
        sources=["p4switch/server/native.cc"],
        language="c++",
        extra_compile_args=["-std=c++17", "-O2", "-Wno-missing-field-initializers", *cflags],
        extra_link_args=libs,
        optional=True,
    ))

setup(ext_modules=extensions)
