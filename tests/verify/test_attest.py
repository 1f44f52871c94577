"""`envguard verify --attest`: a real lock rebuilt, its attestation signed with an openssl-made ed25519 key
and checked by implementations that are not envguard's (securesystemslib's DSSE verifier, in-toto's
Statement v1 model, and the openssl binary over the DSSE spec's pre-authentication encoding)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.helpers import envguard, openssl_keys, spec_lock


def test_securesystemslib_verifies_the_envelope_and_in_toto_reads_the_statement(
    attested: tuple[Path, Path, Path],
) -> None:
    from cryptography.hazmat.primitives.serialization import load_pem_public_key
    from google.protobuf import json_format
    from in_toto_attestation.v1 import statement_pb2
    from in_toto_attestation.v1.statement import Statement
    from securesystemslib.dsse import Envelope
    from securesystemslib.signer import SSlibKey

    lock, public, attestation = attested
    envelope = Envelope.from_dict(json.loads(attestation.read_text()))
    key = SSlibKey.from_crypto(load_pem_public_key(public.read_bytes()))  # type: ignore[arg-type]
    assert list(envelope.verify([key], 1)) == [key.keyid]
    assert envelope.payload_type == "application/vnd.in-toto+json"
    statement = json.loads(envelope.payload)
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    subjects = {s["name"]: s["digest"]["sha256"] for s in statement["subject"]}
    assert subjects["conda-lock.yml"] == hashlib.sha256(lock.read_bytes()).hexdigest()
    parsed = json_format.Parse(envelope.payload, statement_pb2.Statement())  # type: ignore[attr-defined]
    Statement.copy_from_pb(parsed).validate()  # raises on a statement in-toto would not accept
    predicate = statement["predicate"]
    assert predicate["platform"] == "linux-64" and predicate["envguard"]["version"]
    assert [c["name"] for c in predicate["checks"]] == ["hashes", "install", "check"]
    assert any(e.startswith("conda linux-64/numpy-1.26.4-") for e in predicate["manifest"]["entries"])
    assert predicate["fingerprints"]["numpy_generator"]  # measured in the rebuilt environment
    assert any(v.startswith("__glibc=") for v in predicate["virtualPackages"])


def test_openssl_verifies_the_signature_over_the_spec_pae(
    attested: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    _, public, attestation = attested
    document = json.loads(attestation.read_text())
    body, kind = base64.b64decode(document["payload"]), document["payloadType"].encode()
    # DSSE v1: "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, lengths in ASCII decimal
    pae = b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(body), body)
    (tmp_path / "pae").write_bytes(pae)
    (tmp_path / "sig").write_bytes(base64.b64decode(document["signatures"][0]["sig"]))
    command = ["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", str(public), "-rawin"]
    done = subprocess.run(
        [*command, "-in", str(tmp_path / "pae"), "-sigfile", str(tmp_path / "sig")], capture_output=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (tmp_path / "pae").write_bytes(pae.replace(b"DSSEv1", b"DSSEv2"))
    done = subprocess.run(
        [*command, "-in", str(tmp_path / "pae"), "-sigfile", str(tmp_path / "sig")], capture_output=True
    )
    assert done.returncode != 0


def test_a_failed_verify_writes_no_attestation(
    channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = spec_lock(tmp_path, channels["forge"], "six")
    # a hash the archive does not have (a version edited alone is refused at read since issue 28: exit 2)
    text = lock.read_text()
    digest = re.search(r"sha256: ([0-9a-f]{64})", text[text.index("- name: six") :])
    assert digest is not None
    lock.write_text(text.replace(digest.group(1), "ab" * 32))
    private, _ = openssl_keys(tmp_path / "keys")
    attestation = tmp_path / "att.json"
    code = envguard(
        "verify", "--lock", str(lock), "--attest", str(attestation), "--key", str(private), "--json"
    )
    data = json.loads(capsys.readouterr().out)
    assert code == 1 and not attestation.exists()
    assert data["stages"][-1] == {**data["stages"][-1], "name": "attest", "status": "skipped"}
    assert data["attestation"] is None


def test_signing_is_chosen_and_a_bad_key_is_refused_before_the_rebuild(
    channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], scratch: Path
) -> None:
    lock = spec_lock(tmp_path, channels["forge"], "zlib")
    capsys.readouterr()
    assert envguard("verify", "--lock", str(lock), "--attest", str(tmp_path / "a.json")) == 2
    assert "--key KEY" in capsys.readouterr().err
    assert envguard("verify", "--lock", str(lock), "--key", str(lock)) == 2
    assert "add --attest FILE" in capsys.readouterr().err
    rsa = tmp_path / "rsa.pem"
    subprocess.run(
        ["openssl", "genpkey", "-algorithm", "rsa", "-out", str(rsa)], check=True, capture_output=True
    )
    for key, words in ((rsa, "not ed25519"), (lock, "not an unencrypted PEM private key")):
        code = envguard(
            "verify", "--lock", str(lock), "--attest", str(tmp_path / "a.json"), "--key", str(key)
        )
        err = capsys.readouterr().err
        assert code == 2 and words in err and len(err.strip().splitlines()) == 1, err
    assert list(scratch.iterdir()) == []  # refused before any prefix was made
    assert not (tmp_path / "a.json").exists()


def test_keyless_without_an_oidc_identity_is_one_line(
    channels: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from sigstore.oidc import detect_credential

    for name in (
        "GITHUB_ACTIONS",
        "ACTIONS_ID_TOKEN_REQUEST_URL",
        "SIGSTORE_ID_TOKEN",
        "GOOGLE_SERVICE_ACCOUNT_NAME",
    ):
        monkeypatch.delenv(name, raising=False)
    if detect_credential() is not None:
        pytest.skip("an ambient OIDC identity is present; test_keyless_round_trip covers it")
    lock = spec_lock(tmp_path, channels["forge"], "zlib")
    capsys.readouterr()
    code = envguard("verify", "--lock", str(lock), "--attest", str(tmp_path / "a.json"), "--keyless")
    err = capsys.readouterr().err
    assert code == 2 and "no OIDC identity" in err and len(err.strip().splitlines()) == 1


def test_keyless_round_trip(channels: dict[str, Path], tmp_path: Path, scratch: Path) -> None:
    """A real Sigstore signature where the job has an OIDC identity and reaches sigstore (else skipped)."""
    from sigstore.oidc import IdentityToken, detect_credential

    token = detect_credential()
    if token is None:
        pytest.skip("no ambient OIDC identity (sigstore keyless signing runs in CI with id-token: write)")
    identity = IdentityToken(token)
    lock = spec_lock(tmp_path, channels["forge"], "zlib")
    bundle = tmp_path / "env.sigstore.json"
    assert envguard("verify", "--lock", str(lock), "--attest", str(bundle), "--keyless") == 0
    args = ["--identity", identity.identity, "--issuer", identity.issuer]
    prefix = tmp_path / "env"
    assert envguard("create", "--lock", str(lock), "-p", str(prefix)) == 0
    assert envguard("check", str(prefix), "--lock", str(lock), "--attestation", str(bundle), *args) == 0
