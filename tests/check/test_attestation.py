"""`envguard check --attestation FILE --key PUB`: an environment created from an attested lock against what
`verify --attest` attested, offline; forged, foreign and unreadable files refused in one line."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from tests.helpers import envguard, openssl_keys, spec_lock


@pytest.fixture
def created(attested: tuple[Path, Path, Path], tmp_path: Path) -> Path:
    """An environment created from the attested lock."""
    prefix = tmp_path / "env"
    assert envguard("create", "--lock", str(attested[0]), "-p", str(prefix)) == 0
    return prefix


def check(prefix: Path, lock: Path, attestation: Path, key: Path, *extra: str) -> int:
    args = ["check", str(prefix), "--lock", str(lock), "--attestation", str(attestation), "--key", str(key)]
    return envguard(*args, *extra)


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_the_created_environment_matches_its_attestation(
    attested: tuple[Path, Path, Path], created: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock, public, attestation = attested
    capsys.readouterr()
    assert check(created, lock, attestation, public, "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["clean"] is True and data["findings"] == {}
    assert any(note.startswith("signed by ed25519 key ") for note in data["notes"])


def test_one_flipped_byte_is_refused(
    attested: tuple[Path, Path, Path], created: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock, public, attestation = attested
    document = json.loads(attestation.read_text())
    for field in ("payload", "sig"):
        forged = dict(document)
        if field == "payload":
            body = bytearray(base64.b64decode(document["payload"]))
            body[body.index(b"numpy-1.26.4")] ^= 0x01  # numpy -> ortpy... one bit of one byte
            forged["payload"] = base64.b64encode(bytes(body)).decode()
        else:
            signature = bytearray(base64.b64decode(document["signatures"][0]["sig"]))
            signature[0] ^= 0x01
            forged["signatures"] = [
                {**document["signatures"][0], "sig": base64.b64encode(signature).decode()}
            ]
        attestation.write_text(json.dumps(forged))
        capsys.readouterr()
        assert check(created, lock, attestation, public) == 1
        assert "the signature does not verify" in one_line(capsys.readouterr().err)
    raw = bytearray(json.dumps(document).encode())
    raw[0] ^= 0x01  # `{` becomes `z`: not JSON any more
    attestation.write_bytes(bytes(raw))
    capsys.readouterr()
    assert check(created, lock, attestation, public) == 2
    assert "not a JSON attestation" in one_line(capsys.readouterr().err)


def test_another_keys_signature_is_refused(
    attested: tuple[Path, Path, Path], created: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock, _, attestation = attested
    _, stranger = openssl_keys(tmp_path / "other", "stranger")
    capsys.readouterr()
    assert check(created, lock, attestation, stranger) == 1
    assert "signed by another key" in one_line(capsys.readouterr().err)


def test_another_lock_and_other_packages_are_drift(
    attested: tuple[Path, Path, Path],
    channels: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    lock, public, attestation = attested
    other = spec_lock(tmp_path / "other", channels["forge"], "python=3.11", "numpy=1.26", "six", "requests")
    prefix = tmp_path / "other-env"
    assert envguard("create", "--lock", str(other), "-p", str(prefix)) == 0
    capsys.readouterr()
    assert check(prefix, other, attestation, public, "--json") == 1
    data = json.loads(capsys.readouterr().out)
    assert [f["name"] for f in data["findings"]["attestation"]] == ["lock"]
    assert (
        "is not the lock that was attested (conda-lock.yml)" in data["findings"]["attestation"][0]["message"]
    )
    extra = [f for f in data["findings"]["conda"] if f["name"] == "requests"]
    assert extra and extra[0]["kind"] == "only-b" and "not in the attested environment" in extra[0]["message"]
    capsys.readouterr()
    assert check(prefix, lock, attestation, public) == 1  # the right lock; the environment still differs
    out = capsys.readouterr().out
    assert "requests" in out and "Attestation" not in out


def test_unsigned_foreign_and_missing_files_are_one_line(
    attested: tuple[Path, Path, Path],
    channels: dict[str, Path],
    created: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from cryptography.hazmat.primitives.serialization import load_pem_private_key
    from securesystemslib.dsse import Envelope
    from securesystemslib.signer import CryptoSigner

    lock, public, _ = attested
    unsigned = tmp_path / "unsigned.json"
    assert envguard("verify", "--lock", str(lock), "--attest", str(unsigned), "--unsigned") == 0
    assert json.loads(unsigned.read_text())["signatures"] == []
    capsys.readouterr()
    assert check(created, lock, unsigned, public) == 1
    assert "unsigned" in one_line(capsys.readouterr().err)
    # a statement of another predicate type, signed by the right key: readable, but not envguard's
    private = load_pem_private_key((public.parent / "key.pem").read_bytes(), password=None)
    statement = {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [],
        "predicateType": "https://slsa.dev/provenance/v1",
    }
    envelope = Envelope(json.dumps(statement).encode(), "application/vnd.in-toto+json", {})
    envelope.sign(CryptoSigner(private))  # type: ignore[arg-type]
    foreign = tmp_path / "foreign.json"
    foreign.write_text(json.dumps(envelope.to_dict()))
    capsys.readouterr()
    assert check(created, lock, foreign, public) == 2
    assert "not an envguard environment attestation" in one_line(capsys.readouterr().err)
    assert check(created, lock, tmp_path / "missing.json", public) == 2
    assert "no such attestation file" in one_line(capsys.readouterr().err)
    assert envguard("check", str(created), "--key", str(public)) == 2
    assert "add --attestation FILE" in one_line(capsys.readouterr().err)


def test_a_sigstore_bundle_needs_its_identity_and_must_be_readable(
    created: Path, attested: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = attested[0]
    bundle = tmp_path / "env.sigstore.json"
    bundle.write_text(json.dumps({"mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json"}))
    base = ["check", str(created), "--lock", str(lock), "--attestation", str(bundle)]
    capsys.readouterr()
    assert envguard(*base) == 2
    assert "pass --identity and --issuer" in one_line(capsys.readouterr().err)
    who = ["--identity", "https://github.com/o/r/.github/workflows/ci.yml@refs/heads/main"]
    assert envguard(*base, *who, "--issuer", "https://token.actions.githubusercontent.com") == 2
    assert "not a readable Sigstore bundle" in one_line(capsys.readouterr().err)
