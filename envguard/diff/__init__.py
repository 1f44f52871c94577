"""`envguard diff`: two-way comparison of any two sources (exact, or by satisfaction against an
environment.yml).

Its public functions and its one difference type, for the features that compare too (check, sync): they import
them from here, never from diff's modules (an import-linter contract in pyproject.toml).
"""

from __future__ import annotations

from envguard.diff.changes import CATEGORIES, TITLES, Diff, Difference, by_kind, sample
from envguard.diff.run import diff_environments
from envguard.diff.satisfy import unsatisfied

__all__ = [
    "CATEGORIES",
    "TITLES",
    "Diff",
    "Difference",
    "by_kind",
    "diff_environments",
    "sample",
    "unsatisfied",
]
