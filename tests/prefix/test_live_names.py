"""The live reader holds a conda-meta record's name, version and build to the rules the lock reader applies
(issue 42: a live record named `evil/numpy` became `pkg:conda/evil/numpy@1.0`; `/`, `?`, quotes, `: ` and YAML
anchors passed the live reader and were refused by the lock reader)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import MakePrefix, edit_record


@pytest.mark.parametrize(
    ("field", "value"),
    [("name", "evil/numpy"), ("name", "a?b"), ("version", "1.0: x"), ("build", "&anchor"), ("name", "'q'")],
)
def test_a_record_breaking_the_lock_readers_rules_is_refused_by_the_live_reader(
    make_prefix: MakePrefix, tmp_path: Path, field: str, value: str
) -> None:
    prefix = make_prefix(["python=3.11", "zlib"])
    record = edit_record(prefix, "zlib", field, value)
    for argv in (["snapshot", str(prefix)], ["export", str(prefix), "--format", "cyclonedx"]):
        done = subprocess.run(
            [sys.executable, "-m", "envguard", *argv], capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 2, done.stderr
        assert done.stderr.count("\n") == 1 and record.name in done.stderr, done.stderr
        assert "pkg:conda/evil" not in done.stdout
