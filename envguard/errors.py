"""The one error hierarchy: every failure a user can cause or meet is an EnvguardError with an exit code."""

from __future__ import annotations

EXIT_OK = 0
EXIT_DRIFT = 1
EXIT_BAD_INPUT = 2
EXIT_OPERATIONAL = 3
EXIT_BUG = 4
EXIT_INTERRUPTED = 130


class EnvguardError(Exception):
    """Base class; the message says what failed, where, and what to do."""

    exit_code = EXIT_OPERATIONAL


class BadInputError(EnvguardError):
    """A file, argument or environment the user pointed at is missing, malformed or unsupported."""

    exit_code = EXIT_BAD_INPUT


class RefusedError(EnvguardError):
    """A signature or digest that does not verify (an altered attestation, another key's): refused, exit 1."""

    exit_code = EXIT_DRIFT


class UsageError(BadInputError):
    """Options that contradict each other or cannot apply."""


class OperationalError(EnvguardError):
    """The disk, a subprocess or a backend failed while doing what was asked."""

    exit_code = EXIT_OPERATIONAL


class BackendError(OperationalError):
    """conda/mamba/micromamba or the embedded engine failed; the message quotes the tool."""


class ProbeError(OperationalError):
    """The target environment's interpreter hung, crashed or printed something unreadable."""


def first_line(exc: BaseException, limit: int = 200) -> str:
    """The first line of an exception's message (at most `limit` characters), or its type's name: a library's
    error quoted inside envguard's one-line message, without its traceback or C++ frames."""
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:limit]


def where(path: object, line: int | None = None) -> str:
    """Format a location for messages: `file` or `file:line`."""
    return f"{path}:{line}" if line is not None else f"{path}"
