"""A certificate authority made for one replay with openssl: its root, and one ECDSA P-256 key and
certificate for every host name of the page (subjectAltName), signed by it.

Chromium trusts it through `--ignore-certificate-errors-spki-list` with the hash of the server key
(`spki`, written beside the certificates): a fresh profile needs no NSS database, and only this
key is trusted, only in this browser. Anything else that should trust the replay (curl in the
tests) takes the root, `ca.crt`."""
from __future__ import annotations

import base64
import hashlib
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

OPENSSL = "openssl"
DAYS = "2"
CURVE = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]


@dataclass(frozen=True)
class Authority:
    root: Path          # ca.crt
    chain: Path         # server.crt then ca.crt (nginx's ssl_certificate)
    key: Path           # server.key
    spki: str           # base64 SHA-256 of the server key's SubjectPublicKeyInfo (Chromium's flag)


def make(directory: Path, names: Sequence[str]) -> Authority:
    """A root and a server certificate for `names` in `directory` (created)."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    _openssl(["req", "-x509", *CURVE, "-keyout", d / "ca.key", "-out", d / "ca.crt", "-days", DAYS,
              "-subj", "/CN=squall replay CA", "-addext", "basicConstraints=critical,CA:TRUE",
              "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
    _openssl(["req", *CURVE, "-keyout", d / "server.key", "-out", d / "server.csr", "-subj", f"/CN={names[0]}"])
    (d / "server.ext").write_text("subjectAltName=" + ",".join(f"DNS:{n}" for n in names) +
                                  "\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n")
    _openssl(["x509", "-req", "-in", d / "server.csr", "-CA", d / "ca.crt", "-CAkey", d / "ca.key",
              "-CAcreateserial", "-out", d / "server.crt", "-days", DAYS, "-extfile", d / "server.ext"])
    (d / "chain.crt").write_bytes((d / "server.crt").read_bytes() + (d / "ca.crt").read_bytes())
    der = _openssl(["pkey", "-in", d / "server.key", "-pubout", "-outform", "DER"])
    spki = base64.b64encode(hashlib.sha256(der).digest()).decode()
    (d / "spki").write_text(spki + "\n")
    return Authority(d / "ca.crt", d / "chain.crt", d / "server.key", spki)


def _openssl(args: list) -> bytes:
    done = subprocess.run([OPENSSL, *map(str, args)], capture_output=True, timeout=30)
    if done.returncode != 0:
        raise RuntimeError(f"openssl {args[0]} failed: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout
