"""The package index pip uses for an environment, read as pip reads it (config files, then environment
variables), so an export can say where its pip packages came from. Read, never spawned."""

from __future__ import annotations

import configparser
import os
from pathlib import Path

from envguard.channels import scrub

_KEYS = ("index-url", "extra-index-url")
_ALL_KEYS = (*_KEYS, "find-links")
_DEFAULT_INDEX = "https://pypi.org/simple"


def config_files(prefix: Path | None) -> list[Path]:
    """pip's config files in its override order (later wins): global (XDG_CONFIG_DIRS, /etc), user
    (~/.pip, XDG_CONFIG_HOME), the environment's own `pip.conf`, then PIP_CONFIG_FILE."""
    dirs = (os.environ.get("XDG_CONFIG_DIRS") or "/etc/xdg").split(os.pathsep)
    files = [Path(d) / "pip" / "pip.conf" for d in dirs if d] + [Path("/etc/pip.conf")]
    home = Path.home()
    files += [
        home / ".pip" / "pip.conf",
        Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "pip" / "pip.conf",
    ]
    if prefix is not None:
        files.append(prefix / "pip.conf")
    explicit = os.environ.get("PIP_CONFIG_FILE")
    if explicit and explicit != os.devnull:
        files.append(Path(explicit))
    return [] if explicit == os.devnull else files


def settings(prefix: Path | None) -> dict[str, list[str]]:
    """pip's index-url, extra-index-url and find-links as pip reads them (sections [global] then [install] of
    each file, then PIP_INDEX_URL / PIP_EXTRA_INDEX_URL / PIP_FIND_LINKS), credentials kept: for the installer
    only, never to be written or printed."""
    values: dict[str, str] = {}
    for path in config_files(prefix):
        parser = configparser.RawConfigParser()
        try:
            parser.read(path, encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError, OSError):
            continue  # pip would refuse it too; an export does not fail for it
        for section in ("global", "install"):
            for key in _ALL_KEYS:
                if parser.has_option(section, key):
                    values[key] = parser.get(section, key)
    for key in _ALL_KEYS:
        variable = "PIP_" + key.upper().replace("-", "_")
        if os.environ.get(variable):
            values[key] = os.environ[variable]
    return {key: values.get(key, "").split() for key in _ALL_KEYS}


def index_options(prefix: Path | None) -> list[str]:
    """`--index-url URL` and `--extra-index-url URL` lines for what is configured (see `settings`),
    credentials stripped; PyPI, pip's default index, goes unsaid."""
    values = settings(prefix)
    lines = []
    for key in _KEYS:
        for url in values[key]:
            if url.rstrip("/") != _DEFAULT_INDEX or key != "index-url":
                lines.append(f"--{key} {scrub(url)}")
    return lines
