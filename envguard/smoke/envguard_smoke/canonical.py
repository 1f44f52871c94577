"""Canonical bytes and SHA-256 digests of DataLoader samples: same value, same digest, on any platform.

Every value is written with a type tag and its length, so `[1, 2]`, `(1, 2)` and `b"\\x01\\x02"` never
collide, and a tensor's digest covers its dtype and shape as well as its bytes (contiguous, on the CPU).
"""

from __future__ import annotations

import ctypes
import hashlib
import struct
from typing import Any, Dict, List

# Keys of a sample dict that name the sample rather than carry data: an IterableDataset's identity for order
# checks.
IDENTITY_KEYS = ("index", "idx", "id", "key", "path")


def _tensor_bytes(value: Any) -> bytes:
    tensor = value.detach()
    if tensor.device.type != "cpu":
        tensor = tensor.cpu()
    tensor = tensor.contiguous()
    size = tensor.numel() * tensor.element_size()
    # Native byte order: little-endian on every platform torch ships for.
    return ctypes.string_at(tensor.data_ptr(), size) if size else b""


def _numpy_bytes(value: Any) -> bytes:
    array = value.astype(value.dtype.newbyteorder("<"), copy=False) if value.dtype.byteorder == ">" else value
    return bytes(array.tobytes(order="C"))


def _encode(value: Any, out: List[bytes]) -> None:
    kind = type(value).__module__ + "." + type(value).__name__
    if value is None:
        out.append(b"N")
    elif isinstance(value, bool):
        out.append(b"B1" if value else b"B0")
    elif isinstance(value, int):
        text = str(value).encode()
        out.append(b"I" + struct.pack("<I", len(text)) + text)
    elif isinstance(value, float):
        out.append(b"F" + struct.pack("<d", value))
    elif isinstance(value, str):
        _blob(b"S", value.encode("utf-8"), out)
    elif isinstance(value, (bytes, bytearray, memoryview)):
        _blob(b"Y", bytes(value), out)
    elif isinstance(value, dict):
        keys = sorted(value, key=str)
        out.append(b"D" + struct.pack("<I", len(keys)))
        for key in keys:
            _encode(str(key), out)
            _encode(value[key], out)
    elif isinstance(value, (list, tuple)):
        out.append((b"L" if isinstance(value, list) else b"T") + struct.pack("<I", len(value)))
        for item in value:
            _encode(item, out)
    elif kind.startswith("torch.") and hasattr(value, "data_ptr"):
        _blob(b"t" + _shape_tag(str(value.dtype), tuple(value.shape)), _tensor_bytes(value), out)
    elif kind.startswith("numpy.") and hasattr(value, "tobytes"):
        shape = tuple(getattr(value, "shape", ()))
        _blob(b"n" + _shape_tag(str(value.dtype), shape), _numpy_bytes(value), out)
    else:
        _blob(b"R", repr(value).encode("utf-8"), out)


def _shape_tag(dtype: str, shape: tuple) -> bytes:  # type: ignore[type-arg]
    return (dtype + str(list(shape))).encode()


def _blob(tag: bytes, data: bytes, out: List[bytes]) -> None:
    out.append(tag + struct.pack("<Q", len(data)))
    out.append(data)


def digest(value: Any) -> str:
    """SHA-256 (hex) over the canonical bytes of a sample, batch or any nested value."""
    parts: List[bytes] = []
    _encode(value, parts)
    sha = hashlib.sha256()
    for part in parts:
        sha.update(part)
    return sha.hexdigest()


def fields(value: Any) -> Dict[str, Any]:
    """A sample split into named fields: dict keys, tuple positions, or the one field `value`."""
    if isinstance(value, dict):
        return {str(k): v for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return {str(i): v for i, v in enumerate(value)}
    return {"value": value}


def identity(value: Any) -> str:
    """What names a sample of an IterableDataset (no sampler index exists): its `index`-like key when it has
    one, else the digest of the whole sample. Map-style samples are named by their sampler index instead."""
    if isinstance(value, dict):
        for key in IDENTITY_KEYS:
            if key in value:
                return "key:" + digest(value[key])
    return "sample:" + digest(value)


def stream_digest(digests: List[str]) -> str:
    """One digest for an ordered sequence of digests."""
    sha = hashlib.sha256()
    for item in digests:
        sha.update(item.encode("ascii"))
        sha.update(b"\n")
    return sha.hexdigest()
