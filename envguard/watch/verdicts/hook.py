"""Watch's verdict on its own in-process hook (pure): each error it reported (it only stopped the
timing)."""

from __future__ import annotations

from envguard.findings import Finding
from envguard.watch.summary import Summary


def hook_findings(summary: Summary) -> list[Finding]:
    return [
        Finding(
            "hook",
            "in-process hook",
            "WARN",
            error,
            "report it; the run was not affected, only the DataLoader timing is missing from then on",
        )
        for error in summary.hook.errors
    ]
