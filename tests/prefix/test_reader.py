"""Reading live prefixes made by rattler, with a conda-style history and real pip installs."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from envguard.errors import BadInputError
from envguard.prefix.reader import read_prefix
from tests.helpers import envguard, pip_install


def test_reads_conda_records_history_and_pip(make_prefix, channels, capsys) -> None:
    prefix = make_prefix(["python=3.11", "numpy=1.26", "pytorch=2.1=*cuda11.8*", "pip"], cuda="12.4")
    pip_install(prefix, str(channels["wheels"] / "tinyproj-1.0.0-py3-none-any.whl"))
    env = read_prefix(prefix)
    names = {(p.manager, p.name) for p in env.packages}
    assert ("conda", "pytorch") in names and ("pip", "tinyproj") in names
    assert ("pip", "numpy") not in names, "conda-installed dist-infos are not pip packages"
    assert env.python == "3.11.9"
    assert env.platform == "linux-64"
    assert env.cuda.torch_build == "cuda" and env.cuda.torch_cuda == "11.8"
    assert env.cuda.toolkit == "11.8"
    specs = {r.spec for r in env.requested}
    assert "pytorch=2.1=*cuda11.8*" in specs and "numpy=1.26" in specs
    torch = env.get("pytorch")
    assert torch is not None and torch.channel.endswith("/pytorch") and len(torch.sha256) == 64
    assert envguard("snapshot", str(prefix), "--no-probe") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["schema_version"] == 1 and data["kind"] == "prefix"


def test_cpu_build_detected(make_prefix) -> None:
    env = read_prefix(make_prefix(["python=3.11", "pytorch=2.1", "cpuonly"]))
    assert env.cuda.torch_build == "cpu"


def _corrupt(record: Path, text: str) -> None:
    """A record broken long ago (a young one that does not parse is one being written)."""
    record.write_text(text)
    os.utime(record, (time.time() - 3600,) * 2)


def test_corrupt_record_is_one_line_bad_input(make_prefix, capsys) -> None:
    prefix = make_prefix(["python=3.11", "zlib"])
    record = next((prefix / "conda-meta").glob("zlib-*.json"))
    _corrupt(record, record.read_text()[:40])
    with pytest.raises(BadInputError, match=r"corrupt conda-meta record .*zlib-.*\.json"):
        read_prefix(prefix)
    assert envguard("snapshot", str(prefix), "--no-probe") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_corrupt_record_message_is_whole(make_prefix, capsys) -> None:
    """The JSON error is quoted in full, with its position."""
    prefix = make_prefix(["python=3.11", "zlib"])
    record = next((prefix / "conda-meta").glob("zlib-*.json"))
    _corrupt(record, '{"name": "zlib\x01", "version": "1"}')
    assert envguard("snapshot", str(prefix), "--no-probe") == 2
    [line] = capsys.readouterr().err.splitlines()
    assert f"{record.name}: JSON is malformed: invalid character (byte 14);" in line, line


def test_missing_prefix(tmp_path: Path, capsys) -> None:
    assert envguard("snapshot", str(tmp_path / "nope"), "--no-probe") == 2
    assert "no such file or environment" in capsys.readouterr().err


def test_a_record_being_written_is_read_once_it_is_complete(make_prefix) -> None:
    """Issue 28, finding 15: conda writes a record in place, so a reader can meet half of one; it was called
    corrupt. A young record that does not parse is read again for a moment."""
    prefix = make_prefix(["python=3.11", "zlib"])
    record = next((prefix / "conda-meta").glob("zlib-*.json"))
    whole = record.read_text()
    record.write_text(whole[: len(whole) // 2])
    finisher = threading.Timer(0.3, record.write_text, args=(whole,))
    finisher.start()
    try:
        env = read_prefix(prefix)
    finally:
        finisher.join()
    assert "zlib" in {p.name for p in env.packages}


def test_a_record_still_being_written_says_so(make_prefix, capsys) -> None:
    prefix = make_prefix(["python=3.11", "zlib"])
    record = next((prefix / "conda-meta").glob("zlib-*.json"))
    record.write_text(record.read_text()[:40])  # just now, and nobody finishes it
    assert envguard("snapshot", str(prefix), "--no-probe") == 3
    [line] = capsys.readouterr().err.splitlines()
    assert "is being written" in line and "corrupt" not in line and record.name in line, line
