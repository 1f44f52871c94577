"""A FIFO, a socket or a device where a package installed a regular file (issue 28, finding 13): `check
--files` and `doctor` opened it and hung (a FIFO with no writer blocks open() forever; exit 124 at 60 s).
Now each is named as what it is, never opened blocking, and the check finishes."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.helpers import MakePrefix, envguard


def _specials(prefix: Path) -> dict[str, str]:
    """Replace four installed files with a FIFO, a socket, a character device and a folder (issue 42: exit 4,
    IsADirectoryError); their relative paths."""
    records = sorted((prefix / "conda-meta").glob("*.json"))
    files = [
        entry["_path"]
        for record in records
        for entry in json.loads(record.read_text())["paths_data"]["paths"]
        if entry.get("path_type", "hardlink") == "hardlink" and not entry["_path"].endswith(".pyc")
    ]
    chosen = dict(zip(("FIFO", "socket", "device", "folder"), files[:4], strict=True))
    for kind, relative in chosen.items():
        path = prefix / relative
        path.unlink()
        if kind == "FIFO":
            os.mkfifo(path)
        elif kind == "folder":
            path.mkdir()
            (path / "inside").write_text("x")
        elif kind == "socket":  # bound at a short path (AF_UNIX allows ~108 bytes), then moved into place
            short = Path(tempfile.mkdtemp(dir="/tmp")) / "s"
            with socket.socket(socket.AF_UNIX) as server:
                server.bind(str(short))
            short.rename(path)
        else:
            try:
                os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # what /dev/null is
            except PermissionError:
                pytest.skip("cannot make a device node here (needs root)")
    return chosen


@pytest.mark.parametrize("command", [["check", "--files"], ["doctor", "--json"]])
def test_special_files_are_named_not_opened(
    make_prefix: MakePrefix, tmp_path: Path, command: list[str]
) -> None:
    prefix = make_prefix(["python=3.11", "numpy=1.26", "zlib"])
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(prefix), "-o", str(lock)) == 0
    chosen = _specials(prefix)
    extra = ["--lock", str(lock)] if command[0] == "check" else []
    argv = [sys.executable, "-m", "envguard", command[0], str(prefix), *command[1:], *extra]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=90, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{' '.join(command)} hung on a special file")
    out = done.stdout + done.stderr
    assert done.returncode in (0, 1), out[-2000:]
    for kind, relative in chosen.items():
        assert relative in out, (kind, out[-2000:])
    for word in ("a FIFO (named pipe)", "a socket", "a device", "a folder"):
        assert word in out, (word, out[-3000:])
