"""`lock --format pixi --pixi-version 7` of a record py-rattler refuses (a version, build, hash or build
number it cannot hold) is one line naming the package, exit 2 (issue 42: 13 of 17 such records: exit 4)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import MakePrefix, edit_record


@pytest.mark.parametrize(
    ("field", "value"),
    [("md5", "xyz"), ("sha256", "nothex"), ("version", "1..2"), ("build_number", -3), ("build", "a b")],
)
def test_a_record_rattler_refuses_is_one_line(
    make_prefix: MakePrefix, tmp_path: Path, field: str, value: object
) -> None:
    prefix = make_prefix(["python=3.11", "zlib"])
    edit_record(prefix, "zlib", field, value)
    out = tmp_path / "pixi.lock"
    argv = ["lock", str(prefix), "--no-probe", "--format", "pixi", "--pixi-version", "7", "-o", str(out)]
    done = subprocess.run(
        [sys.executable, "-m", "envguard", *argv], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "zlib" in done.stderr, done.stderr
    assert not out.exists()
