"""`-o` onto what is not a plain file (issue 11, D1): a FIFO, a device, /dev/stdout and a symlink keep what
they are; temp files a killed run left behind are removed."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.helpers import envguard


@pytest.fixture
def prefix(tmp_path: Path) -> Path:
    env = tmp_path / "env"
    (env / "conda-meta").mkdir(parents=True)
    record = {"name": "zlib", "version": "1.3.1", "build": "h0_0", "subdir": "linux-64", "depends": []}
    (env / "conda-meta" / "zlib-1.3.1-h0_0.json").write_text(json.dumps(record))
    return env


def test_output_onto_a_fifo_streams_and_keeps_the_fifo(tmp_path, prefix) -> None:
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    assert envguard("snapshot", str(prefix), "--no-probe", "-o", str(fifo)) == 0
    reader.join(10)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced by a regular file"
    assert got and json.loads(got[0])["kind"] == "prefix"


@pytest.mark.skipif(os.geteuid() != 0, reason="creating a device node needs root")
def test_output_onto_a_character_device_keeps_the_device(tmp_path, prefix) -> None:
    null = tmp_path / "null"
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a private /dev/null
    assert envguard("snapshot", str(prefix), "--no-probe", "-o", str(null)) == 0
    assert stat.S_ISCHR(os.lstat(null).st_mode), "the device node was replaced by a regular file"


def test_output_to_dev_stdout_reaches_stdout(tmp_path, prefix) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "envguard", "snapshot", str(prefix), "--no-probe", "-o", "/dev/stdout"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["kind"] == "prefix"


def test_output_appended_to_a_file_through_dev_stdout(tmp_path, prefix) -> None:
    out = tmp_path / "log.txt"
    out.write_text("first line\n")
    with open(out, "a") as handle:
        argv = [sys.executable, "-m", "envguard", "snapshot", str(prefix), "--no-probe", "-o", "/dev/stdout"]
        subprocess.run(argv, stdout=handle, timeout=60, check=True)
    text = out.read_text()
    assert text.startswith("first line\n") and '"kind": "prefix"' in text


def test_output_onto_a_symlink_writes_its_target(tmp_path, prefix) -> None:
    real = tmp_path / "real.json"
    real.write_text("old\n")
    os.chmod(real, 0o640)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    assert envguard("snapshot", str(prefix), "--no-probe", "-o", str(link)) == 0
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert json.loads(real.read_text())["kind"] == "prefix"
    assert stat.S_IMODE(os.stat(real).st_mode) == 0o640


def test_stale_temp_files_of_a_killed_run_are_removed(tmp_path, prefix) -> None:
    out = tmp_path / "snap.json"
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    stale = tmp_path / f".snap.json.{int(dead.stdout)}.0badf00d.tmp"
    stale.write_text("half")
    live = tmp_path / f".snap.json.{os.getpid()}.0badf00d.tmp"  # a live writer's file stays
    live.write_text("in progress")
    other = tmp_path / f".other.json.{int(dead.stdout)}.0badf00d.tmp"
    other.write_text("not for this target")
    assert envguard("snapshot", str(prefix), "--no-probe", "-o", str(out)) == 0
    assert not stale.exists() and live.exists() and other.exists()
    assert json.loads(out.read_text())["kind"] == "prefix"
