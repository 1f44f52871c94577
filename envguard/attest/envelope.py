"""Sign and open DSSE envelopes: with an ed25519 key file (securesystemslib's DSSE envelope and signer, so
the pre-authentication encoding and the JSON are the ones every DSSE verifier reads; opened by dsse.py, each
signature tried with each trusted key), keyless with sigstore (a Sigstore bundle holding the envelope), or
unsigned when that is asked for.

Key files are PEM, as `openssl genpkey -algorithm ed25519` (private) and `openssl pkey -pubout` (public)
write them. cryptography, securesystemslib and sigstore are imported here only, when an attestation is made
or checked (the `attest` extra).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from envguard.attest import dsse
from envguard.errors import BadInputError, EnvguardError, OperationalError, RefusedError
from envguard.textio import read_bytes
from envguard.version import install_line

Mode = Literal["key", "keyless", "unsigned"]
BUNDLE_MEDIA = "application/vnd.dev.sigstore.bundle"


@dataclass(frozen=True)
class Signing:
    """How to sign: with `key` (a private key file), keyless (sigstore, an ambient OIDC identity), or not."""

    mode: Mode
    key: Path | None = None


@dataclass(frozen=True)
class Opened:
    """A verified envelope's payload and who signed it (`ed25519 key <keyid>`, `sigstore: <identity>`)."""

    payload: bytes
    payload_type: str
    signer: str


def _libraries() -> None:
    try:
        import cryptography  # noqa: F401
        import securesystemslib  # noqa: F401
    except ImportError as exc:
        raise OperationalError(f"attestations need {exc.name}; {install_line('attest')}") from exc


def load_signer(key: Path) -> Any:
    """A securesystemslib signer for an ed25519 private key file; bad input naming the file otherwise."""
    _libraries()
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import load_pem_private_key
    from securesystemslib.signer import CryptoSigner

    data = _read(key, "key")
    try:
        private = load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise BadInputError(
            f"{key}: not an unencrypted PEM private key ({_first(exc)}); make one with `openssl genpkey "
            "-algorithm ed25519 -out KEY`"
        ) from exc
    if not isinstance(private, Ed25519PrivateKey):
        raise BadInputError(
            f"{key}: a {type(private).__name__.removeprefix('_')} key, not ed25519; make one with "
            "`openssl genpkey -algorithm ed25519 -out KEY`"
        )
    return CryptoSigner(private)


def public_key(key: Path) -> Any:
    """A securesystemslib key from an ed25519 public key file (or the private key it belongs to)."""
    _libraries()
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from cryptography.hazmat.primitives.serialization import load_pem_public_key
    from securesystemslib.signer import SSlibKey

    data = _read(key, "key")
    if b"PRIVATE KEY" in data:
        return load_signer(key).public_key
    try:
        loaded = load_pem_public_key(data)
    except (ValueError, TypeError) as exc:
        raise BadInputError(
            f"{key}: not a PEM public key ({_first(exc)}); export it with `openssl pkey -in KEY -pubout "
            "-out KEY.pub`"
        ) from exc
    if not isinstance(loaded, Ed25519PublicKey):
        raise BadInputError(f"{key}: a {type(loaded).__name__.removeprefix('_')} key, not ed25519")
    return SSlibKey.from_crypto(loaded)


def seal(payload: bytes, payload_type: str, signing: Signing, signer: Any = None) -> bytes:
    """The file to write: a DSSE envelope (signed with `signer`, or unsigned) or, keyless, a Sigstore bundle
    (`signer` is then the OIDC identity from `oidc_identity`)."""
    if signing.mode == "keyless":
        return _sigstore_sign(payload, signer)
    from securesystemslib.dsse import Envelope

    envelope = Envelope(payload, payload_type, {})
    if signing.mode == "key":
        envelope.sign(signer)
    return (json.dumps(envelope.to_dict(), indent=2, sort_keys=True) + "\n").encode()


def open_envelope(
    path: Path, key: Path | Sequence[Path] | None, identity: str | None, issuer: str | None
) -> Opened:
    """The verified payload of the attestation at `path`: a DSSE envelope checked against the trusted `key`
    file(s), or a Sigstore bundle checked against the signer's `identity` and OIDC `issuer`. Unreadable:
    bad input (exit 2); a signature that does not verify: refused (exit 1)."""
    data = _read(path, "attestation")
    document = dsse.load_json(data, str(path), "JSON attestation")
    if not isinstance(document, dict):
        raise BadInputError(f"{path}: not a DSSE envelope or a Sigstore bundle")
    if str(document.get("mediaType", "")).startswith(BUNDLE_MEDIA):
        if not (identity and issuer):
            raise BadInputError(
                f"{path}: a Sigstore bundle (keyless); pass --identity and --issuer (who signed it in CI)"
            )
        return _sigstore_open(path, data, identity, issuer)
    keys = [key] if isinstance(key, Path) else list(key or ())
    if not keys:
        raise BadInputError(f"{path}: pass --key PUB, the public key of the key that signed it")
    return _dsse_open(path, document, keys)


def _dsse_open(path: Path, document: dict[str, Any], keys: Sequence[Path]) -> Opened:
    """Each signature against each trusted key (those its keyid names first): DSSE's keyid is an optional,
    unauthenticated hint, so an envelope without one, or with another's, verifies with the right key."""
    trusted = [(file, public_key(file)) for file in keys]
    envelope = dsse.parse(document, str(path))
    from securesystemslib.exceptions import UnverifiedSignatureError
    from securesystemslib.signer import Signature

    if not envelope.signatures:
        raise RefusedError(f"{path}: unsigned (made with --unsigned); nothing vouches for it")
    pae = envelope.pae()
    for signature in envelope.signatures:
        for _, public in sorted(trusted, key=lambda pair: pair[1].keyid != signature.keyid):
            try:
                # the key's own id: the library compares ids, DSSE leaves them out of what is verified
                public.verify_signature(Signature(public.keyid, signature.sig.hex()), pae)
            except UnverifiedSignatureError:
                continue
            hint = "" if signature.keyid == public.keyid else f" ({_keyid_note(signature.keyid)})"
            return Opened(envelope.payload, envelope.payload_type, f"ed25519 key {public.keyid}{hint}")
    tried = ", ".join(f"{file} (key {public.keyid[:16]})" for file, public in trusted)
    raise RefusedError(
        f"{path}: the signature does not verify: {len(envelope.signatures)} signature(s) over the payload "
        f"and its type (DSSE pre-authentication encoding) checked with {tried}; altered, or signed by "
        "another key"
    )


def _keyid_note(keyid: str) -> str:
    return (
        f"the envelope's keyid {keyid[:16]!r} is another name for it" if keyid else "no keyid in the envelope"
    )


def oidc_identity() -> str:
    """The ambient OIDC identity token sigstore signs with (a CI job's); bad input where there is none."""
    try:
        from sigstore.oidc import detect_credential
    except ImportError as exc:
        raise OperationalError(f"keyless signing needs sigstore; {install_line('attest')}") from exc
    try:
        token = detect_credential()
    except Exception as exc:  # sigstore's IdentityError: an identity that is there but unusable
        raise OperationalError(f"--keyless: the OIDC identity cannot be read ({_first(exc)})") from exc
    if token is None:
        raise BadInputError(
            "--keyless: no OIDC identity here (sigstore signs with the CI job's identity, e.g. GitHub "
            "Actions with `permissions: id-token: write`); sign with --key KEY instead"
        )
    return token


def _sigstore_sign(payload: bytes, token: str) -> bytes:
    from sigstore import dsse
    from sigstore.models import ClientTrustConfig
    from sigstore.oidc import IdentityToken
    from sigstore.sign import SigningContext

    try:
        context = SigningContext.from_trust_config(ClientTrustConfig.production())
        with context.signer(IdentityToken(token)) as signer:
            bundle = signer.sign_dsse(dsse.Statement(payload))
    except Exception as exc:  # sigstore's network and protocol errors have no common base class
        raise OperationalError(f"--keyless: sigstore could not sign ({_first(exc)})") from exc
    return (bundle.to_json() + "\n").encode()


def _sigstore_open(path: Path, data: bytes, identity: str, issuer: str) -> Opened:
    try:
        from sigstore.models import Bundle
        from sigstore.verify import Verifier
        from sigstore.verify.policy import Identity
    except ImportError as exc:
        raise OperationalError(
            f"a Sigstore bundle needs sigstore to check; {install_line('attest')}"
        ) from exc
    try:
        bundle = Bundle.from_json(data)
    except Exception as exc:  # pydantic and sigstore's own validation errors
        raise BadInputError(f"{path}: not a readable Sigstore bundle ({_first(exc)})") from exc
    try:
        verifier = Verifier.production(offline=True)
    except Exception as exc:
        raise OperationalError(
            f"sigstore's trust root is not cached here ({_first(exc)}); run once where the network reaches "
            "sigstore's TUF repository"
        ) from exc
    try:
        payload_type, payload = verifier.verify_dsse(bundle, Identity(identity=identity, issuer=issuer))
    except EnvguardError:
        raise
    except Exception as exc:
        raise RefusedError(
            f"{path}: the Sigstore bundle does not verify for {identity} ({_first(exc)})"
        ) from exc
    return Opened(payload, payload_type, f"sigstore: {identity} ({issuer})")


def _read(path: Path, what: str) -> bytes:
    try:
        return read_bytes(path)
    except FileNotFoundError as exc:
        raise BadInputError(f"{path}: no such {what} file") from exc
    except OSError as exc:
        raise BadInputError(f"{path}: cannot read the {what} file ({exc.strerror})") from exc


def _first(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__
