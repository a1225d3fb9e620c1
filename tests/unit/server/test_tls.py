"""P4Runtime over TLS (--grpc-server-ssl and friends)."""

from __future__ import annotations

import shutil
import subprocess

import grpc
import pytest

from p4switch.proto import p4r, p4r_grpc
from p4switch.server import P4RuntimeServer, ServerError, TlsConfig

from .conftest import TRANSPORTS, each_transport

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    d = tmp_path_factory.mktemp("tls")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                    "-keyout", str(d / "key.pem"), "-out", str(d / "cert.pem")],
                   check=True, capture_output=True)
    return d


transport = pytest.fixture(params=TRANSPORTS)(each_transport)


def capabilities(port: int, creds: grpc.ChannelCredentials) -> p4r.CapabilitiesResponse:
    with grpc.secure_channel(f"127.0.0.1:{port}", creds) as ch:
        return p4r_grpc.P4RuntimeStub(ch).Capabilities(p4r.CapabilitiesRequest(), timeout=5)


def test_tls_server_answers_tls_clients(certs, transport: str) -> None:
    """With a certificate the server speaks TLS; a client trusting it gets answers, a plain one none."""
    srv = P4RuntimeServer(address="127.0.0.1:0", transport=transport,
                          tls=TlsConfig(cert=str(certs / "cert.pem"), key=str(certs / "key.pem"))).start()
    try:
        creds = grpc.ssl_channel_credentials(root_certificates=(certs / "cert.pem").read_bytes())
        assert capabilities(srv.port, creds).p4runtime_api_version
        with grpc.insecure_channel(f"127.0.0.1:{srv.port}") as ch, pytest.raises(grpc.RpcError) as e:
            p4r_grpc.P4RuntimeStub(ch).Capabilities(p4r.CapabilitiesRequest(), timeout=5)
        assert e.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        srv.stop(grace=0)


def test_client_auth_requires_a_certificate_signed_by_the_ca(certs, transport: str) -> None:
    """--grpc-server-with-client-auth: a client without a certificate is refused, one with it served."""
    cert, key = certs / "cert.pem", certs / "key.pem"
    srv = P4RuntimeServer(address="127.0.0.1:0", transport=transport,
                          tls=TlsConfig(cert=str(cert), key=str(key), ca=str(cert), client_auth=True)).start()
    try:
        anonymous = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())
        with pytest.raises(grpc.RpcError) as e:
            capabilities(srv.port, anonymous)
        assert e.value.code() == grpc.StatusCode.UNAVAILABLE
        known = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes(),
                                             private_key=key.read_bytes(), certificate_chain=cert.read_bytes())
        assert capabilities(srv.port, known).p4runtime_api_version
    finally:
        srv.stop(grace=0)


def test_missing_certificate_file_is_server_error(certs, transport: str) -> None:
    """A TLS file that cannot be read stops the server from starting."""
    with pytest.raises(ServerError, match="TLS"):
        P4RuntimeServer(address="127.0.0.1:0", transport=transport,
                        tls=TlsConfig(cert=str(certs / "nope.pem"), key=str(certs / "key.pem")))


def test_bad_certificate_is_server_error(certs, transport: str, tmp_path) -> None:
    """A certificate file that is not PEM stops the server with a ServerError, not a crash."""
    bad = tmp_path / "bad.pem"
    bad.write_text("not a certificate\n")
    with pytest.raises(ServerError):
        P4RuntimeServer(address="127.0.0.1:0", transport=transport,
                        tls=TlsConfig(cert=str(bad), key=str(certs / "key.pem")))
