"""`envguard check`: the live environment against a lock or environment.yml, with a stat-cache fast path.

The names below are check's public functions and types: another feature (sync, verify) imports them from
here, never from check's modules (an import-linter contract in pyproject.toml). They load on first use:
importing a module of this package runs this file first, and the fast path (`envguard.check.fast`, standard
library only) answers an unchanged environment before the full check's modules are worth loading.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from envguard.check.discovery import find_lock
    from envguard.check.files import file_findings
    from envguard.check.fixes import relock_command
    from envguard.check.report import CheckReport, check_environment, severity
    from envguard.check.run import CheckOutcome, parse_target, run_check

# public name -> the module of this package that defines it
PUBLIC = {
    "CheckOutcome": "run",
    "CheckReport": "report",
    "check_environment": "report",
    "file_findings": "files",
    "find_lock": "discovery",
    "parse_target": "run",
    "relock_command": "fixes",
    "run_check": "run",
    "severity": "report",
}

__all__ = [  # PUBLIC's names, spelled out for the linters
    "CheckOutcome",
    "CheckReport",
    "check_environment",
    "file_findings",
    "find_lock",
    "parse_target",
    "relock_command",
    "run_check",
    "severity",
]


def __getattr__(name: str) -> Any:
    """A public name, from its module (loaded on this first use)."""
    if name not in PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{PUBLIC[name]}"), name)
