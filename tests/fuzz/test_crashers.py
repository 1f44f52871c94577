"""The minimised crashers from the adversarial pass (issue 11): each was exit 4 (or a hang); each must now be
exit 2 with one line naming the file, or a clean answer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import envguard

RECORD = {
    "name": "zlib",
    "version": "1.3.1",
    "build": "h0_0",
    "build_number": 0,
    "channel": "https://conda.anaconda.org/conda-forge/linux-64",
    "subdir": "linux-64",
    "url": "https://conda.anaconda.org/conda-forge/linux-64/zlib-1.3.1-h0_0.conda",
    "depends": [],
    "files": [],
}


def _prefix(tmp_path: Path, record: dict[str, object], history: str = "") -> Path:
    prefix = tmp_path / "env"
    (prefix / "conda-meta").mkdir(parents=True)
    (prefix / "conda-meta" / "zlib-1.3.1-h0_0.json").write_text(json.dumps(record))
    if history:
        (prefix / "conda-meta" / "history").write_text(history)
    return prefix


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err, err
    return err


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("build_number", "x"),
        ("build_number", [1]),
        ("requested_specs", 1.5),
        ("depends", [{}]),
        ("depends", "zlib"),
        ("size_in_bytes", "x"),
        ("url", 5),
        ("channel", {"a": 1}),
        ("md5", ["x"]),
        ("files", 3),
    ],
)
def test_wrong_json_types_in_a_record_are_bad_input(tmp_path, capsys, field, value) -> None:
    if field == "size_in_bytes":  # a field of one paths_data entry
        entry = {"_path": "lib/libz.so", "path_type": "hardlink", field: value}
        prefix = _prefix(tmp_path, {**RECORD, "paths_data": {"paths_version": 1, "paths": [entry]}})
    else:
        prefix = _prefix(tmp_path, {**RECORD, field: value})
    argv = ["snapshot", str(prefix), "--no-probe"]
    if field in ("files", "size_in_bytes"):  # the file lists: read by what reads them (snapshot skips them)
        argv = ["export", str(prefix), "--format", "cyclonedx"]
    code = envguard(*argv)
    err = _one_line(capsys)
    assert code == 2, err
    assert "zlib-1.3.1-h0_0.json" in err and field in err


def test_a_100k_character_history_line(tmp_path, capsys) -> None:
    history = (
        "==> 2024-01-01 00:00:00 <==\n# cmd: conda install "
        + "x" * 100_000
        + "\n+conda-forge::zlib-1.3.1-h0_0\n"
    )
    prefix = _prefix(tmp_path, RECORD, history)
    assert envguard("snapshot", str(prefix), "--no-probe") in (0, 2)
    _one_line(capsys)


@pytest.mark.parametrize(
    "info",
    [
        '{"dir_info": 5, "url": "file:///x"}',
        '{"vcs_info": "git", "url": "x"}',
        '{"url": 7}',
        '{"dir_info": {"editable": "yes"}, "url": "file:///x"}',
    ],
)
def test_non_mapping_direct_url_fields(tmp_path, capsys, info) -> None:
    prefix = tmp_path / "venv"
    dist = prefix / "lib" / "python3.11" / "site-packages" / "demo-1.0.dist-info"
    dist.mkdir(parents=True)
    (prefix / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.11.9\n")
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n\n")
    (dist / "INSTALLER").write_text("pip\n")
    (dist / "direct_url.json").write_text(info)
    assert envguard("snapshot", str(prefix), "--no-probe") in (0, 2)
    _one_line(capsys)


@pytest.mark.parametrize(
    "line",
    [
        "https://conda.anaconda.org/c/linux-64/zlib-1.3.1-h0_\u0663.conda",  # an Arabic-Indic digit
        "https://conda.anaconda.org/c/linux-64/zlib-1.3.1-h0_" + "9" * 5000 + ".conda",
        "https://[::1/c/linux-64/zlib-1.3.1-h0_0.conda",  # a malformed IPv6 host
        "http://[fe80::1%zz]:x/c/linux-64/zlib-1.3.1-h0_0.conda",
    ],
)
def test_explicit_file_oddities(tmp_path, capsys, line) -> None:
    spec = tmp_path / "spec.txt"
    spec.write_text(f"@EXPLICIT\n{line}\n", encoding="utf-8")
    assert envguard("diff", str(spec), str(spec)) in (0, 2)
    _one_line(capsys)


def test_deep_not_selector(tmp_path, capsys) -> None:
    yml = tmp_path / "environment.yml"
    yml.write_text("name: x\ndependencies:\n  - zlib  # [" + "not " * 5000 + "linux]\n")
    assert envguard("diff", str(yml), str(yml)) in (0, 2)
    _one_line(capsys)


LOCK = """version: 1
metadata:
  content_hash: {{linux-64: abc}}
  channels: [{{url: conda-forge, used_env_vars: []}}]
  platforms: [linux-64]
  sources: {sources}
package:
- name: zlib
  version: 1.3.1
  manager: conda
  platform: linux-64
  dependencies: {{}}
  url: https://conda.anaconda.org/conda-forge/linux-64/zlib-1.3.1-h0_0.conda
  hash: {{md5: 0123456789abcdef0123456789abcdef}}
"""


@pytest.mark.parametrize("sources", ["5", "[1, 2]", "{a: b}", "'x'"])
def test_lock_metadata_sources_of_the_wrong_type(tmp_path, capsys, sources) -> None:
    lock = tmp_path / "conda-lock.yml"
    lock.write_text(LOCK.format(sources=sources))
    assert envguard("diff", str(lock), str(lock)) in (0, 2)
    _one_line(capsys)


@pytest.mark.parametrize(
    "data",
    [
        {
            "schema_version": 1,
            "kind": "prefix",
            "packages": [{"name": 5, "version": "1", "manager": "conda"}],
        },
        {"schema_version": 1, "kind": "prefix", "packages": 5},
        {"schema_version": 1, "kind": "prefix", "packages": [5]},
        {"schema_version": 1, "kind": "prefix", "channels": "abc", "requested": [{"spec": 1}]},
        {"schema_version": 1, "kind": "nonsense", "packages": []},
        {"schema_version": 1, "kind": "prefix", "cuda": 3},
        {"schema_version": 1, "kind": "prefix", "packages": [{"name": "a", "version": "1", "depends": 4}]},
    ],
)
def test_wrongly_typed_snapshot(tmp_path, capsys, data) -> None:
    snap = tmp_path / "snap.json"
    snap.write_text(json.dumps(data))
    code = envguard("diff", str(snap), str(snap))
    err = _one_line(capsys)
    assert code == 2, err
    assert "snap.json" in err


def test_alias_bomb_in_lock_metadata_is_refused_fast(tmp_path, capsys) -> None:
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    lock = tmp_path / "conda-lock.yml"
    lock.write_text("bombs:\n  " + "\n  ".join(levels) + "\n" + LOCK.format(sources="*a8"))
    start = time.monotonic()
    assert envguard("diff", str(lock), str(lock)) == 2
    assert time.monotonic() - start < 10
    assert "alias" in _one_line(capsys)


def test_alias_bomb_in_condarc(tmp_path, capsys, isolated_home) -> None:
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    (isolated_home / ".condarc").write_text("\n".join(levels) + "\nenvs_dirs: *a8\n")
    assert envguard("snapshot", "name:nothing", "--no-probe") == 2
    assert "alias" in _one_line(capsys)


def _fifo(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    os.mkfifo(path)
    return path


@pytest.mark.parametrize(
    "args",
    [
        ["check", "{prefix}", "--lock", "{fifo}", "--no-cache"],
        ["check", "{prefix}", "-f", "{fifo}"],
        ["lock", "-f", "{fifo}", "--platform", "linux-64"],
        ["diff", "{fifo}", "{fifo}"],
        ["snapshot", "{fifo}", "--no-probe"],
    ],
)
def test_a_fifo_where_a_file_is_expected_is_exit_2_within_a_second(tmp_path, args) -> None:
    fifo = _fifo(tmp_path, "conda-lock.yml")
    # a SOURCE for check: with none given and none active it would stop at that, before the file
    argv = [a.replace("{fifo}", str(fifo)).replace("{prefix}", sys.prefix) for a in args]
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "envguard", *argv], capture_output=True, text=True, timeout=30, cwd=tmp_path
    )
    took = time.monotonic() - start
    assert proc.returncode == 2, proc.stderr
    assert "FIFO" in proc.stderr and "Traceback" not in proc.stderr
    assert took < 8  # the interpreter's start dominates; a hang would hit the 30 s timeout


def test_a_fifo_in_conda_meta_does_not_hang(tmp_path) -> None:
    prefix = _prefix(tmp_path, RECORD)
    os.mkfifo(prefix / "conda-meta" / "history")
    os.mkfifo(prefix / "conda-meta" / "evil.json")
    proc = subprocess.run(
        [sys.executable, "-m", "envguard", "snapshot", str(prefix), "--no-probe"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2 and "evil.json" in proc.stderr and "FIFO" in proc.stderr, proc.stderr


def test_utf8_character_straddling_the_sniff_window(tmp_path, capsys) -> None:
    """W3: valid UTF-8 over 64 KiB whose multibyte character crosses byte 65,536 is read, not refused."""
    head = '{"schema_version": 1, "kind": "prefix", "source": "'
    pad = "a" * (65535 - len(head.encode()))
    text = head + pad + 'Ж", "packages": []}'
    assert text.encode().index("Ж".encode()) == 65535  # the character's two bytes straddle 65,536
    snap = tmp_path / "snap.json"
    snap.write_text(text, encoding="utf-8")
    assert envguard("diff", str(snap), str(snap)) == 0, capsys.readouterr().err
