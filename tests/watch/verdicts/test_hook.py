"""Watch's verdict on its own hook: each error it reported is a warning saying the run was unaffected."""

from __future__ import annotations

from envguard.watch.records import HookStatus
from envguard.watch.verdicts.hook import hook_findings
from tests.watch.helpers import summary


def test_each_hook_error_is_a_warning() -> None:
    errors = ("pid 10: DataLoader timing: KeyError: 'x'", "pid 11: patching torch.utils.data: boom")
    found = hook_findings(summary(hook=HookStatus("active", errors)))
    assert [f.evidence for f in found] == list(errors) and {f.status for f in found} == {"WARN"}
    assert all("the run was not affected" in f.fix for f in found)
    assert hook_findings(summary()) == []
