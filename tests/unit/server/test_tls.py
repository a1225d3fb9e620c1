"""P4Runtime over TLS (--grpc-server-ssl and friends)."""

from __future__ import annotations

import shutil
import subprocess

import grpc
import pytest

from p4switch.proto import p4r, p4r_grpc
from p4switch.server import P4RuntimeServer, ServerError, TlsConfig

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    d = tmp_path_factory.mktemp("tls")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                    "-keyout", str(d / "key.pem"), "-out", str(d / "cert.pem")],
                   check=True, capture_output=True)
    return d


def test_tls_server_answers_tls_clients(certs) -> None:
    """With a certificate the server speaks TLS; a client trusting it gets answers."""
    srv = P4RuntimeServer(address="127.0.0.1:0", tls=TlsConfig(cert=str(certs / "cert.pem"),
                                                               key=str(certs / "key.pem"))).start()
    try:
        creds = grpc.ssl_channel_credentials(root_certificates=(certs / "cert.pem").read_bytes())
        with grpc.secure_channel(f"127.0.0.1:{srv.port}", creds) as ch:
            resp = p4r_grpc.P4RuntimeStub(ch).Capabilities(p4r.CapabilitiesRequest(), timeout=5)
        assert resp.p4runtime_api_version
    finally:
        srv.stop(grace=0)


def test_missing_certificate_file_is_server_error(certs) -> None:
    """A TLS file that cannot be read stops the server from starting."""
    with pytest.raises(ServerError, match="TLS"):
        P4RuntimeServer(address="127.0.0.1:0", tls=TlsConfig(cert=str(certs / "nope.pem"),
                                                             key=str(certs / "key.pem")))
