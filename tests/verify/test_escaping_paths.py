"""T2 (issue 11): a package whose paths.json names an absolute path aborted verify/create with a Rust panic
(SIGABRT) and left temp folders; now it is exit 2 (issue 28: bad input) with one line naming the package, and
nothing is left."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import envguard, hostile_channel, settled


def test_an_absolute_path_in_paths_json_is_refused(channels, tmp_path) -> None:
    evil = str(tmp_path / "outside" / "evil.txt")
    channel = hostile_channel(channels["forge"], tmp_path, evil)
    archive = sorted(channel.rglob("zlib-*.conda"))[-1]
    yml = tmp_path / "environment.yml"
    yml.write_text(
        f"channels:\n  - {channel.resolve().as_uri()}\ndependencies:\n  - zlib={archive.name.split('-')[1]}\n"
    )
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", "-f", str(yml), "--no-cuda", "-o", str(lock)) == 0
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "envguard",
            "verify",
            "--lock",
            str(lock),
            "--pkgs-dir",
            str(tmp_path / "pkgs"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "TMPDIR": str(scratch)},
    )
    assert proc.returncode == 2, proc.stderr
    assert "zlib" in proc.stderr and "outside the environment" in proc.stderr
    assert not Path(evil).exists() and settled(scratch) == []
