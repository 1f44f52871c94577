"""A DSSE envelope as the specification defines it (pure): read and typed once, and its pre-authentication
encoding (PAE), the bytes each signature covers.

https://github.com/secure-systems-lab/dsse/blob/master/envelope.md: `payload` and each `sig` are base64
(standard or URL-safe, padding optional), `keyid` is optional and unauthenticated, a hint for choosing the
key that may be absent, empty or another signer's name. So a reader must not require or trust it: the verifier
(envelope.py) tries each trusted key on each signature, keyid-matching keys first.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from envguard.errors import BadInputError


@dataclass(frozen=True, slots=True)
class Sig:
    """One signature of an envelope: its bytes and the keyid hint ('' where absent)."""

    sig: bytes
    keyid: str = ""


@dataclass(frozen=True, slots=True)
class Envelope:
    """A parsed DSSE envelope."""

    payload: bytes
    payload_type: str
    signatures: tuple[Sig, ...]

    def pae(self) -> bytes:
        """`DSSEv1 <len(type)> <type> <len(payload)> <payload>`: what every signature signs."""
        kind = self.payload_type.encode("utf-8")
        return b"DSSEv1 %d %b %d %b" % (len(kind), kind, len(self.payload), self.payload)


def load_json(data: bytes, origin: str, what: str) -> Any:
    """JSON from `data`; undecodable, invalid or nested past the parser's depth: bad input naming `origin`."""
    try:
        return json.loads(data)
    except RecursionError as exc:
        raise BadInputError(f"{origin}: not a {what} (JSON nested too deeply to read)") from exc
    except (UnicodeDecodeError, ValueError) as exc:
        text = str(exc).strip().splitlines()
        raise BadInputError(f"{origin}: not a {what} ({text[0][:200] if text else 'invalid'})") from exc


def parse(document: dict[str, Any], origin: str) -> Envelope:
    """The envelope of a decoded JSON object; any field of the wrong type or encoding is bad input naming the
    field."""
    payload = _b64(document.get("payload"), origin, "payload")
    payload_type = document.get("payloadType")
    if not isinstance(payload_type, str):
        raise BadInputError(f"{origin}: not a DSSE envelope (`payloadType` {_shown(payload_type)}, not text)")
    raw = document.get("signatures")
    if not isinstance(raw, list):
        raise BadInputError(f"{origin}: not a DSSE envelope (`signatures` {_shown(raw)}, not a list)")
    signatures = []
    for index, item in enumerate(raw):
        where = f"signatures[{index}]"
        if not isinstance(item, dict):
            raise BadInputError(f"{origin}: not a DSSE envelope (`{where}` {_shown(item)}, not an object)")
        keyid = item.get("keyid", "")
        if keyid is None:
            keyid = ""
        if not isinstance(keyid, str):
            raise BadInputError(f"{origin}: not a DSSE envelope (`{where}.keyid` {_shown(keyid)}, not text)")
        signatures.append(Sig(_b64(item.get("sig"), origin, f"{where}.sig"), keyid))
    return Envelope(payload, payload_type, tuple(signatures))


def _b64(value: object, origin: str, field: str) -> bytes:
    if not isinstance(value, str):
        raise BadInputError(f"{origin}: not a DSSE envelope (`{field}` {_shown(value)}, not base64 text)")
    padded = value + "=" * (-len(value) % 4)
    try:
        altchars = b"-_" if "-" in value or "_" in value else None  # URL-safe base64, which DSSE allows
        return base64.b64decode(padded.encode("ascii"), altchars=altchars, validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError) as exc:
        raise BadInputError(f"{origin}: not a DSSE envelope (`{field}` is not base64)") from exc


def _shown(value: object) -> str:
    if value is None:
        return "missing"
    text = json.dumps(value) if isinstance(value, str | int | float | bool) else type(value).__name__
    return f"is {text[:40]}"
