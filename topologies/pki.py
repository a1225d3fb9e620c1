"""The fabric's own certificate authority: mutual TLS between the controller and its switches.

Every switch's P4Runtime server is reachable on a loopback TCP port, and
on a shared machine any local user can open a TCP connection. So `aizone
up` makes a CA for the fabric (`FabricPki.create`), used for nothing else
and gone with the fabric, and every switch, on either target, serves
P4Runtime over TLS and asks for a client certificate from that CA
(`--grpc-server-ssl --grpc-server-with-client-auth`, flags BMv2's
simple_switch_grpc and p4switch share). The controller holds the one
client certificate. Keys are written 0600 in a 0700 folder that only root
reads: another user can connect to the port but not finish the handshake,
let alone become primary. The same files serve a fabric whose switches
run on other machines: the server certificate names the addresses given.

Keys are ECDSA P-256, certificates valid for 30 days (a fabric is up for
hours; a new `up` makes a new CA).

Names defined here: `FabricPki`.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["FabricPki"]

_DAYS = 30


@dataclass(frozen=True, kw_only=True)
class FabricPki:
    """The files of a fabric's CA, its switches' server certificate and the controller's."""

    directory: Path
    """The 0700 folder that holds them (`<state dir>/pki`)."""

    @property
    def ca(self) -> Path:
        """The CA certificate (PEM)."""
        return self.directory / "ca.pem"

    @property
    def server_cert(self) -> Path:
        """The certificate every switch serves P4Runtime with (PEM)."""
        return self.directory / "switch.pem"

    @property
    def server_key(self) -> Path:
        """The switches' private key (PEM, 0600)."""
        return self.directory / "switch.key"

    @property
    def client_cert(self) -> Path:
        """The controller's client certificate (PEM)."""
        return self.directory / "controller.pem"

    @property
    def client_key(self) -> Path:
        """The controller's private key (PEM, 0600)."""
        return self.directory / "controller.key"

    def exists(self) -> bool:
        """Whether all five files are there."""
        return all(p.is_file() for p in (self.ca, self.server_cert, self.server_key,
                                          self.client_cert, self.client_key))

    def server_flags(self) -> list[str]:
        """simple_switch_grpc's (and p4switch's) flags for TLS with client authentication."""
        return ["--grpc-server-ssl", "--grpc-server-cacert", str(self.ca),
                "--grpc-server-cert", str(self.server_cert),
                "--grpc-server-key", str(self.server_key), "--grpc-server-with-client-auth"]

    @classmethod
    def create(cls, directory: Path, *, addresses: Iterable[str] = ("127.0.0.1", "::1"),
               names: Iterable[str] = ("localhost",)) -> FabricPki:
        """A new CA and its two certificates in `directory` (replacing what was there)."""
        pki = cls(directory=directory)
        old = os.umask(0o077)
        try:
            directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.chmod(directory, 0o700)
            now = dt.datetime.now(dt.UTC)
            ca_key = ec.generate_private_key(ec.SECP256R1())
            ca_name = _name("aizone fabric CA")
            ca = (_builder(ca_name, ca_name, ca_key.public_key(), now)
                  .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                  .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True,
                                               crl_sign=True, content_commitment=False,
                                               key_encipherment=False, data_encipherment=False,
                                               key_agreement=False, encipher_only=False,
                                               decipher_only=False), critical=True)
                  .sign(ca_key, hashes.SHA256()))
            sans: list[x509.GeneralName] = [x509.DNSName(n) for n in names]
            sans += [x509.IPAddress(ipaddress.ip_address(a)) for a in addresses]
            _issue(pki.server_cert, pki.server_key, "aizone switch", ca, ca_key, now,
                   ExtendedKeyUsageOID.SERVER_AUTH, sans)
            _issue(pki.client_cert, pki.client_key, "aizone controller", ca, ca_key, now,
                   ExtendedKeyUsageOID.CLIENT_AUTH, [x509.DNSName("aizone-controller")])
            _write(pki.ca, ca.public_bytes(serialization.Encoding.PEM))
        finally:
            os.umask(old)
        return pki


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _builder(subject: x509.Name, issuer: x509.Name, key: ec.EllipticCurvePublicKey,
             now: dt.datetime) -> x509.CertificateBuilder:
    return (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
            .public_key(key).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=_DAYS)))


def _issue(cert_path: Path, key_path: Path, common: str, ca: x509.Certificate,
           ca_key: ec.EllipticCurvePrivateKey, now: dt.datetime, usage: x509.ObjectIdentifier,
           sans: list[x509.GeneralName]) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (_builder(_name(common), ca.subject, key.public_key(), now)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
            .add_extension(x509.SubjectAlternativeName(sans), critical=False)
            .sign(ca_key, hashes.SHA256()))
    _write(key_path, key.private_bytes(serialization.Encoding.PEM,
                                       serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    _write(cert_path, cert.public_bytes(serialization.Encoding.PEM))


def _write(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
