"""Package names, the two ways envguard spells them (pure, `re` only: every reader of a prefix needs them, so
they cost nothing to import): PEP 503 normalised pip project names, and the package a conda spec names."""

from __future__ import annotations

import re

_NORMALIZE = re.compile(r"[-_.]+")
_SPEC_NAME = re.compile(r"[A-Za-z0-9_.\-]+")


def canonical_name(name: str) -> str:
    """PEP 503 normalised project name: `Typing_Extensions` -> `typing-extensions`."""
    if "_" not in name and "." not in name and "--" not in name:  # most names: nothing to collapse
        return name.lower()
    return _NORMALIZE.sub("-", name).lower()


def spec_name(spec: str) -> str:
    """The package name of a MatchSpec string: `conda-forge::numpy[version='<2']` -> `numpy`."""
    rest = spec.split("::", 1)[-1].strip()
    match = _SPEC_NAME.match(rest)
    return match.group(0).lower() if match else rest.lower()
