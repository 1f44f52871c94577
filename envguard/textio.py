"""Reading input files safely and decoding them the way real environment files arrive: UTF-8 or UTF-16 with a
BOM, CRLF line ends. Every input is opened without blocking and must be a regular file, so a FIFO or a device
where a file is expected is bad input at once instead of a hang.

YAML is read here too: PyYAML's C loader when it was built with libyaml (several times faster), else the
pure-Python one, chosen once; safe loading only. Every YAML envguard reads (environment.yml, conda-lock.yml,
condarc) goes through `load_yaml`/`compose_yaml`; writing is envguard.formats.yaml. Aliases are shared nodes,
so a "billion laughs" document is small to parse but enormous once anything walks it: a document whose
alias-expanded node count passes MAX_YAML_NODES is refused (yaml.YAMLError) before any value is built."""

from __future__ import annotations

import codecs
import contextlib
import gc
import os
import re
import stat
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from envguard.errors import BadInputError

_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_OPEN_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
)
MAX_INPUT_BYTES = 512 * 1024 * 1024  # far above any real lock or record; a bound against /dev/zero-like files


class NotRegularFileError(OSError):
    """The path exists but is a FIFO, socket, device or folder (raised by `read_bytes`)."""


def open_nonblocking(path: str | os.PathLike[str]) -> int:
    """A read-only descriptor opened with O_NONBLOCK: a FIFO without a writer never hangs the open (the
    caller fstats it before reading)."""
    return os.open(path, _OPEN_FLAGS)


def special_kind(mode: int) -> str | None:
    """What a non-regular file is (`a FIFO (named pipe)`, `a socket`, `a device`, `a folder`), or None."""
    if stat.S_ISREG(mode):
        return None
    return "a folder" if stat.S_ISDIR(mode) else _kind(mode)


def read_bytes(path: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """The bytes of a regular file (the first `limit` bytes when given), opened with O_NONBLOCK so a FIFO
    never hangs. OSError for a missing or unreadable file; NotRegularFileError for anything not a regular file
    (a FIFO, a socket, a device, a folder)."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a folder" if stat.S_ISDIR(info.st_mode) else _kind(info.st_mode)
            raise NotRegularFileError(0, f"is {kind}, not a regular file")
        want = MAX_INPUT_BYTES if limit is None else min(limit, MAX_INPUT_BYTES)
        ask = min(want, info.st_size + 1, 1 << 20)
        first = os.read(fd, ask)
        if len(first) < ask:
            return first  # the whole file in one read (a regular file reads short only at its end)
        chunks: list[bytes] = [first]
        left = want - len(first)
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def decode(data: bytes, origin: object = "<input>", *, partial: bool = False) -> str:
    """Bytes to text with universal newlines; UTF-16/32 need a BOM, everything else must be UTF-8.

    `partial`: `data` is the head of a longer file, so a multibyte character cut at its end is dropped rather
    than refused."""
    encoding = "utf-8"
    for bom, name in _BOMS:
        if data.startswith(bom):
            encoding = name
            break
    try:
        if partial:
            text = codecs.getincrementaldecoder(encoding)().decode(data, final=False)
        else:
            text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise BadInputError(
            f"{origin}:{line}: not valid {encoding} text ({exc.reason}); save the file as UTF-8"
        ) from exc
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_input(path: Path, limit: int | None = None) -> bytes:
    """`read_bytes` with every failure as bad input naming the path (exit 2)."""
    try:
        return read_bytes(path, limit)
    except FileNotFoundError as exc:
        raise BadInputError(f"{path}: no such file; check the path") from exc
    except IsADirectoryError as exc:
        raise BadInputError(f"{path}: is a folder, expected a file") from exc
    except NotRegularFileError as exc:
        raise BadInputError(f"{path}: {exc.strerror}; give a regular file") from exc
    except OSError as exc:
        raise BadInputError(f"{path}: cannot read ({exc.strerror or exc}); check its permissions") from exc


def read_text(path: Path) -> str:
    """Read and decode a text file; a missing, unreadable or non-regular file is bad input naming the
    path."""
    return decode(read_input(path), path)


# --- text that reaches a terminal --------------------------------------------------------------------------
# Characters that act on a terminal or on how text reads instead of showing themselves: C0 and C1 controls and
# DEL (ESC starts ANSI and OSC sequences: colours, cursor moves, OSC 52 writing the clipboard), the bidi
# overrides, embeddings, isolates and marks (right-to-left override reorders what a line shows), the Unicode
# line and paragraph separators, and lone surrogates (undecodable bytes, which no stream can write). Tab and
# line feed are the only controls a view may hold, and only between values, never inside one.
_C0 = "\x00-\x08\x0b-\x1f"
_BEYOND_C0 = "\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_CONTROL = _C0 + _BEYOND_C0
_IN_TEXT = re.compile(f"[{_CONTROL}]")  # what a multi-line view must not hold
_IN_VALUE = re.compile(f"[\t\n{_CONTROL}]")  # what one value or one line must not hold


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _escape_bytes(match: re.Match[str]) -> str:
    char = match.group()
    try:
        data = char.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that no undecodable byte made
        data = char.encode("utf-8", "surrogatepass")
    return "".join(f"\\x{byte:02x}" for byte in data)


def visible(text: str, *, lines: bool = True, utf8_bytes: bool = False) -> str:
    """`text` with every control and bidi character written as a visible escape (`\\x1b`, `\\u202e`), so
    nothing read from an input can drive a terminal or reorder what it shows. `lines`: line feeds and tabs
    stay (a whole view); else they are escaped too (one value, one message line). `utf8_bytes`: each escape
    names the character's UTF-8 bytes (`\\xe2\\x80\\xae`), as bash's $'...' reads them in any locale."""
    pattern = _IN_TEXT if lines else _IN_VALUE
    if not pattern.search(text):
        return text
    return pattern.sub(_escape_bytes if utf8_bytes else _escape, text)


_IN_JSON = re.compile(f"[{_BEYOND_C0}]")  # json.dumps escapes C0 itself


def visible_json(text: str) -> str:
    """JSON text (json.dumps with ensure_ascii=False) with the characters of `visible` that JSON leaves raw
    written as `\\u` escapes: still valid JSON, decoding to the very same values."""
    return _IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text) if _IN_JSON.search(text) else text


_PRINTABLE_ASCII = bytes(range(0x20, 0x7F))


def control_problem(value: str) -> str | None:
    """Why `value` (one name, version, URL, spec) cannot be shown as it is: the first control or bidi
    character it holds, named (`U+001B`); None when it has none. ASCII text is scanned by bytes.translate
    (~20x faster than the regular expression: a 100,000-package lock is one 16 MB scan)."""
    if value.isascii() and not value.encode("ascii").translate(None, _PRINTABLE_ASCII):
        return None
    found = _IN_VALUE.search(value)
    if found is None:
        return None
    code = ord(found.group())
    return f"holds the control character U+{code:04X}" + (" (a line break)" if code == 10 else "")


MAX_YAML_NODES = 2_000_000  # a 5,000-package conda-lock.yml expands to about 150,000 nodes


@lru_cache(maxsize=1)
def yaml_loader() -> Any:
    """yaml.CSafeLoader when available, else yaml.SafeLoader."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str) -> Any:
    """Plain data from YAML text (yaml.YAMLError on malformed input or an alias bomb)."""
    import yaml

    instance = yaml_loader()(text)
    try:
        node = instance.get_single_node()
        if node is None:
            return None
        if "&" in text:  # no anchor, no alias: nothing can expand (and the walk would cost ~1x the parse)
            _check_yaml_size(node)
        return instance.construct_document(node)
    except RecursionError as exc:
        raise yaml.YAMLError("nested too deeply to read") from exc
    finally:
        instance.dispose()


def compose_yaml(text: str) -> Any:
    """The node tree (with line numbers) of YAML text (yaml.YAMLError on malformed input or an alias
    bomb)."""
    import yaml

    try:
        node = yaml.compose(text, Loader=yaml_loader())
    except RecursionError as exc:
        raise yaml.YAMLError("nested too deeply to read") from exc
    if node is not None and "&" in text:
        _check_yaml_size(node)
    return node


def yaml_reason(exc: Exception) -> str:
    """A YAML error in one line for messages (its first line, else its class name)."""
    text = str(exc).strip().split("\n", 1)[0].strip()
    return text[:200] if text else exc.__class__.__name__


def _check_yaml_size(root: Any) -> None:
    """Refuse a node tree whose alias-expanded size passes MAX_YAML_NODES (each shared node counted once per
    use, computed once per node, iteratively so deep nesting cannot exhaust the stack)."""
    import yaml

    sizes: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if key in sizes and not done:
            continue
        children = _yaml_children(node)
        if not done:
            sizes[key] = -1  # in progress: a recursive alias refers back here
            stack.append((node, True))
            stack.extend((child, False) for child in children if id(child) not in sizes)
            continue
        total = 1 + sum(max(sizes.get(id(child), 1), 1) for child in children)
        if total > MAX_YAML_NODES:
            raise yaml.YAMLError(
                f"document expands to more than {MAX_YAML_NODES:,} nodes through aliases (an alias bomb?); "
                "refusing to read it"
            )
        sizes[key] = total


def _yaml_children(node: Any) -> list[Any]:
    value = getattr(node, "value", None)
    if not isinstance(value, list):
        return []
    out: list[Any] = []
    for item in value:
        if isinstance(item, tuple):
            out.extend(item)
        else:
            out.append(item)
    return out


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while a reader builds hundreds of thousands of containers
    (records, lock entries, Packages: none of them can form a cycle, and reference counting frees them as
    ever). Its collections grow with what is alive, and a 100,000-package prefix or lock cost a quarter of
    their reading's CPU time in them. Nests; the collector's state before is restored. Also a decorator.
    check, diff, export and lock run whole under it (envguard.cli.commands): between their readers' pauses
    the collector walked everything those had made, 0.2-0.5 s of a 100,000-package command, and what a
    command makes is freed by reference counting when it ends (cyclic garbage waits for a later collection).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
