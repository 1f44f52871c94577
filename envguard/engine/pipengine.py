"""The pip engine: uv (the binary its wheel carries) as rattler is the conda engine, pip where uv cannot
serve.

`ENVGUARD_PIP_ENGINE` chooses (`uv`, `pip`, `auto`: uv when found, else pip); `ENVGUARD_UV` names the uv
binary (a path that does not run is "no uv"). Nothing is probed at import time, and nothing is ever
downloaded: uv is the one `uv.find_uv_bin()` finds beside envguard.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path

from envguard.errors import UsageError

ENGINES = ("auto", "uv", "pip")

# pip options -> uv's (None: pip-only, nothing to pass); anything else is an option only pip understands
_FLAGS: dict[str, str | None] = {
    "--no-deps": "--no-deps",
    "--no-index": "--no-index",
    "--require-hashes": "--require-hashes",
    "--dry-run": "--dry-run",
    "--ignore-installed": None,  # sync removes what it replaces first; a fresh venv has nothing installed
    "--no-compile": None,  # uv compiles nothing unless asked
    "--no-input": None,
    "--disable-pip-version-check": None,
    "--pre": "--prerelease=allow",
    "-e": "-e",
    "--editable": "--editable",
    "-r": "-r",
    "--requirement": "--requirement",
}
_VALUED = {
    "--find-links": "--find-links",
    "-f": "--find-links",
    "--index-url": "--index-url",
    "-i": "--index-url",
    "--extra-index-url": "--extra-index-url",
    "-c": "--constraint",
    "--constraint": "--constraint",
}


@dataclass(frozen=True)
class PipEngine:
    """The engine that installs pip packages: `name` is `uv` or `pip`; `uv` the binary when it is uv; `why`
    says how it was chosen (shown in reports)."""

    name: str
    uv: str = ""
    why: str = ""

    def describe(self) -> str:
        return f"{self.name} ({self.why})" if self.why else self.name


def find_uv() -> str | None:
    """The uv binary: `$ENVGUARD_UV` when set (None when it is not an executable file), else the one the `uv`
    wheel installed beside envguard (`uv.find_uv_bin()`), else None."""
    explicit = os.environ.get("ENVGUARD_UV")
    if explicit is not None:
        return explicit if os.path.isfile(explicit) and os.access(explicit, os.X_OK) else None
    try:
        import uv

        found = uv.find_uv_bin()
    except (ImportError, FileNotFoundError):
        return None
    return found if os.access(found, os.X_OK) else None


def select(choice: str | None = None) -> PipEngine:
    """The pip engine: the choice, else `$ENVGUARD_PIP_ENGINE`, else uv when it is there, else pip."""
    wanted = (choice or os.environ.get("ENVGUARD_PIP_ENGINE") or "auto").strip().lower()
    if wanted not in ENGINES:
        raise UsageError(
            f"unknown pip engine {wanted!r} (ENVGUARD_PIP_ENGINE); choose one of {', '.join(ENGINES)}"
        )
    if wanted == "pip":
        return PipEngine("pip", why="asked for")
    uv = find_uv()
    if uv is None:
        if wanted == "uv":
            raise UsageError(
                "ENVGUARD_PIP_ENGINE=uv but no uv runs here (ENVGUARD_UV, or the uv wheel); reinstall "
                "envguard or choose pip"
            )
        return PipEngine("pip", why="uv not found")
    return PipEngine("uv", uv=uv)


def uv_arguments(options: list[str]) -> list[str] | None:
    """pip's install options as uv's (`--find-links DIR` stays, `--no-compile` goes); None when one of them is
    an option only pip understands (pip then installs)."""
    result: list[str] = []
    words = iter(options)
    for word in words:
        flag, eq, value = word.partition("=")
        if flag in _VALUED:
            result += [_VALUED[flag], value if eq else next(words, "")]
        elif word in _FLAGS:
            mapped = _FLAGS[word]
            if mapped is not None:
                result.append(mapped)
        elif word.startswith("-"):
            return None
        else:
            result.append(word)
    return result


def uv_command(
    engine: PipEngine, python: Path, prefix: Path, options: list[str], requirements: list[str]
) -> list[str] | None:
    """`uv pip install --python PYTHON --prefix PREFIX ...` for pip's options and requirements, or None (see
    uv_arguments). `--prefix`, as envguard passes pip: the files go into PREFIX even where the interpreter's
    own prefix is another (a launcher script, a symlinked base interpreter)."""
    translated = uv_arguments([*options, *requirements])
    if translated is None:
        return None
    command = [engine.uv, "pip", "install", "--no-config", "--python", str(python), "--prefix", str(prefix)]
    return [*command, *translated]


def split_options(options: list[str]) -> list[str]:
    """Option strings as words (`--find-links DIR` is two)."""
    return [arg for option in options for arg in shlex.split(option)]
