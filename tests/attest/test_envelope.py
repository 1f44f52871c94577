"""DSSE as its specification says: the keyid is an optional, unauthenticated hint, so verification tries each
trusted key; an envelope with an empty, absent or foreign keyid verifies with the right key and with no other;
a malformed envelope is one line of bad input (exit 2), never a traceback. And an independent consumer,
securesystemslib's own DSSE verification, accepts what `envguard verify --attest` writes."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from envguard.attest import envelope
from envguard.attest.statement import PAYLOAD_TYPE, PREDICATE_TYPE, STATEMENT_TYPE
from envguard.errors import BadInputError, RefusedError
from tests.helpers import envguard, openssl_keys

PAYLOAD = json.dumps({"_type": STATEMENT_TYPE, "predicateType": PREDICATE_TYPE}).encode()


@pytest.fixture
def keys(tmp_path: Path) -> dict[str, tuple[Path, Path]]:
    """Two ed25519 key pairs made by openssl: (private, public) for `right` and `other`."""
    return {name: openssl_keys(tmp_path / "keys", name) for name in ("right", "other")}


def signed(tmp_path: Path, private: Path, **signature: Any) -> Path:
    """An envelope of PAYLOAD signed with `private`, its signature's fields replaced by `signature` (a value
    of None removes the field)."""
    sealed = envelope.seal(
        PAYLOAD, PAYLOAD_TYPE, envelope.Signing("key", private), envelope.load_signer(private)
    )
    document = json.loads(sealed)
    for field, value in signature.items():
        if value is None:
            del document["signatures"][0][field]
        else:
            document["signatures"][0][field] = value
    path = tmp_path / "att.json"
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize("keyid", ["", None, "someone-elses-name-for-the-key"])
def test_the_keyid_is_a_hint_the_right_key_verifies_whatever_it_says(
    keys: dict[str, tuple[Path, Path]], tmp_path: Path, keyid: str | None
) -> None:
    right, other = keys["right"], keys["other"]
    path = signed(tmp_path, right[0], keyid=keyid)
    opened = envelope.open_envelope(path, right[1], None, None)
    assert opened.payload == PAYLOAD and opened.payload_type == PAYLOAD_TYPE
    assert opened.signer.startswith("ed25519 key ")
    assert "keyid" in opened.signer  # says the envelope named no key, or named it otherwise
    assert envelope.open_envelope(path, [other[1], right[1]], None, None).payload == PAYLOAD  # each key tried
    with pytest.raises(RefusedError) as refused:
        envelope.open_envelope(path, other[1], None, None)
    message = str(refused.value)
    assert "does not verify" in message and str(other[1]) in message and "pre-authentication" in message


def test_another_keys_envelope_fails_even_when_it_names_the_trusted_keyid(
    keys: dict[str, tuple[Path, Path]], tmp_path: Path
) -> None:
    right, other = keys["right"], keys["other"]
    trusted_id = envelope.public_key(right[1]).keyid
    path = signed(tmp_path, other[0], keyid=trusted_id)  # the hint lies: other's signature, right's name
    with pytest.raises(RefusedError, match="signed by another key"):
        envelope.open_envelope(path, right[1], None, None)
    assert envelope.open_envelope(path, other[1], None, None).payload == PAYLOAD


def test_url_safe_unpadded_base64_verifies(keys: dict[str, tuple[Path, Path]], tmp_path: Path) -> None:
    path = signed(tmp_path, keys["right"][0])
    document = json.loads(path.read_text())
    signature = base64.b64decode(document["signatures"][0]["sig"])
    document["signatures"][0]["sig"] = base64.urlsafe_b64encode(signature).decode().rstrip("=")
    document["payload"] = base64.urlsafe_b64encode(PAYLOAD).decode().rstrip("=")
    path.write_text(json.dumps(document))
    assert envelope.open_envelope(path, keys["right"][1], None, None).payload == PAYLOAD


def _malformed(good: dict[str, Any]) -> dict[str, str]:
    signature = good["signatures"][0]
    return {
        "payload-number": json.dumps({**good, "payload": 5}),
        "sig-number": json.dumps({**good, "signatures": [{**signature, "sig": 5}]}),
        "keyid-list": json.dumps({**good, "signatures": [{**signature, "keyid": [1]}]}),
        "signatures-number": json.dumps({**good, "signatures": 5}),
        "signature-string": json.dumps({**good, "signatures": ["x"]}),
        "type-missing": json.dumps({k: v for k, v in good.items() if k != "payloadType"}),
        "payload-not-base64": json.dumps({**good, "payload": "***"}),
        "deeply-nested": "[" * 200_000 + "]" * 200_000,
        "nested-in-payload-type": json.dumps({**good, "payloadType": [[[]]]}),
    }


def test_malformed_envelopes_are_bad_input_naming_the_field(
    keys: dict[str, tuple[Path, Path]], tmp_path: Path
) -> None:
    good = json.loads(signed(tmp_path, keys["right"][0]).read_text())
    for case, text in _malformed(good).items():
        path = tmp_path / f"{case}.json"
        path.write_text(text)
        with pytest.raises(BadInputError) as bad:
            envelope.open_envelope(path, keys["right"][1], None, None)
        assert str(path) in str(bad.value), case


def test_check_says_one_line_exit_2_for_a_malformed_envelope(
    keys: dict[str, tuple[Path, Path]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = json.loads(signed(tmp_path, keys["right"][0]).read_text())
    lock = tmp_path / "conda-lock.yml"
    lock.write_text("version: 1\n")
    cases = _malformed(good)
    for case in ("payload-number", "sig-number", "deeply-nested"):
        path = tmp_path / f"{case}.json"
        path.write_text(cases[case])
        capsys.readouterr()
        code = envguard(
            "check",
            str(tmp_path),
            "--lock",
            str(lock),
            "--attestation",
            str(path),
            "--key",
            str(keys["right"][1]),
        )
        err = capsys.readouterr().err
        assert code == 2, (case, err)
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
        assert f"{path}: not a" in err


def test_securesystemslib_verifies_what_verify_attest_writes(attested: tuple[Path, Path, Path]) -> None:
    """The consumer the README names: securesystemslib's DSSE Envelope and its key, no envguard code."""
    from cryptography.hazmat.primitives.serialization import load_pem_public_key
    from securesystemslib.dsse import Envelope
    from securesystemslib.signer import SSlibKey

    _, public, attestation = attested
    key = SSlibKey.from_crypto(load_pem_public_key(public.read_bytes()))  # type: ignore[arg-type]
    dsse = Envelope.from_dict(json.loads(attestation.read_text()))
    assert dsse.payload_type == "application/vnd.in-toto+json"
    assert set(dsse.verify([key], 1)) == {key.keyid}
    statement = json.loads(dsse.payload)
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    assert statement["predicateType"] == "https://envguard.dev/attestation/environment/v1"
    assert statement["subject"][0]["name"] == "conda-lock.yml"
