"""Slurm hostlist expressions expanded as `scontrol show hostnames` does (pure).

`SLURM_JOB_NODELIST` names a job's hosts compactly: `alpha,beta,gamma`, `linux[0-64,128]`,
`lx[15,18,32-33]`, `rack[0-63]_blade[0-41]`, `linux[0000-1023]` (slurm.conf(5)'s examples). As Slurm's
hostlist.c parses them: names are separated by commas, spaces, tabs or newlines outside brackets; in a name,
the last bracket group is the numeric range list, what follows its `]` is a suffix, and any bracket groups
before it are expanded first (outermost), so `rack[0-1]_blade[0-2]` gives rack0_blade0, rack0_blade1, ...;
each number is zero-padded to the width of the range's low bound as written (`[001-010]` gives 001 ... 010,
`[1-10]` gives 1 ... 10); order and duplicates are kept (`tux[2,1-2]` is tux2, tux1, tux2).
"""

from __future__ import annotations

from collections.abc import Iterator

from envguard.errors import BadInputError

SEPARATORS = ", \t\n"
MAX_RANGE = 64 * 1024  # Slurm's limit on one range; anything larger is taken as a typo


def hostnames(expression: str) -> list[str]:
    """Every host name of `expression`, in order (what `scontrol show hostnames EXPRESSION` prints)."""
    return list(iter_hostnames(expression))


def first_host(expression: str) -> str:
    """The first host of `expression` (without expanding the rest)."""
    for host in iter_hostnames(expression):
        return host
    raise BadInputError(f"hostlist {expression!r} names no host")


def iter_hostnames(expression: str) -> Iterator[str]:
    """The host names of `expression`, lazily; a malformed expression raises BadInputError naming it."""
    for token in _tokens(expression):
        yield from _expand(token, expression)


def _tokens(text: str) -> Iterator[str]:
    """Names separated by SEPARATORS, a separator inside brackets being part of the name."""
    depth, start = 0, None
    for index, char in enumerate(text):
        if char == "[":
            depth += 1
        elif char == "]":
            depth = max(0, depth - 1)
        if char in SEPARATORS and depth == 0:
            if start is not None:
                yield text[start:index]
            start = None
        elif start is None:
            start = index
    if start is not None:
        yield text[start:]


def _expand(token: str, expression: str) -> Iterator[str]:
    """One name: its last bracket group is the range list, anything before it is expanded outermost."""
    open_at = token.rfind("[")
    if open_at < 0:
        yield token
        return
    close_at = token.find("]", open_at)
    if close_at < 0:
        raise _malformed(expression, f"'{token}' has '[' without ']'")
    ranges = _ranges(token[open_at + 1 : close_at], expression)
    suffix = token[close_at + 1 :]
    for prefix in _expand(token[:open_at], expression) if "[" in token[:open_at] else (token[:open_at],):
        for low, high, width in ranges:
            for number in range(low, high + 1):
                yield f"{prefix}{number:0{width}d}{suffix}"


def _ranges(text: str, expression: str) -> list[tuple[int, int, int]]:
    """`0-64,128` as (low, high, width) triples; the width is the low bound's length as written."""
    out = []
    for part in text.split(","):
        low_text, dash, high_text = part.partition("-")
        if not _digits(low_text) or (dash and not _digits(high_text)):
            raise _malformed(expression, f"'[{text}]' holds '{part}', not a number or a range N-M")
        low = int(low_text)
        high = int(high_text) if dash else low
        if low > high:
            raise _malformed(expression, f"range '{part}' runs backwards")
        if high - low + 1 > MAX_RANGE:
            raise _malformed(expression, f"range '{part}' holds more than {MAX_RANGE} hosts")
        out.append((low, high, len(low_text)))
    return out


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _malformed(expression: str, why: str) -> BadInputError:
    return BadInputError(
        f"hostlist {expression!r} is not one Slurm writes: {why}; set MASTER_ADDR to rank 0's host instead"
    )
