"""Decode text files the way real environment files arrive: UTF-8 or UTF-16 with a BOM, CRLF line ends."""

from __future__ import annotations

import codecs
from pathlib import Path

from envguard.errors import BadInputError

_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def decode(data: bytes, origin: object = "<input>") -> str:
    """Bytes to text with universal newlines; UTF-16/32 need a BOM, everything else must be UTF-8."""
    encoding = "utf-8"
    for bom, name in _BOMS:
        if data.startswith(bom):
            encoding = name
            break
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise BadInputError(
            f"{origin}:{line}: not valid {encoding} text ({exc.reason}); save the file as UTF-8"
        ) from exc
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_text(path: Path) -> str:
    """Read and decode a text file; a missing or unreadable file is bad input naming the path."""
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise BadInputError(f"{path}: no such file; check the path") from exc
    except IsADirectoryError as exc:
        raise BadInputError(f"{path}: is a folder, expected a file") from exc
    except OSError as exc:
        raise BadInputError(f"{path}: cannot read ({exc.strerror}); check its permissions") from exc
    return decode(data, path)
