"""Bad input says one line, exit 2, and only advises options the command has: wrongly typed conda-meta
fields name the file and the field (a plain-string `depends` is never split into characters), an unknown
platform and a lock without hashes are bad input (2), and "use --no-probe" comes only from commands that
have --no-probe."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import MakePrefix, envguard


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("envguard: error: "), err
    return err[0]


READING = ("snapshot", "export", "check", "check --files", "diff", "lock")


@pytest.mark.parametrize(
    ("field", "value", "commands"),
    [
        ("depends", "python >=3.8", READING),
        ("requested_specs", 1.5, READING),
        ("version", 3, READING),
        # the file lists: read (and checked) only where they are used
        ("constrains", "numpy <2", ("check --files",)),
        ("files", "lib/x", ("check --files",)),
    ],
)
def test_a_wrongly_typed_record_field_is_exit_2_naming_file_and_field(
    field: str,
    value: object,
    commands: tuple[str, ...],
    make_prefix: MakePrefix,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    prefix = make_prefix(["zlib"])
    record = next((prefix / "conda-meta").glob("zlib-*.json"))
    data = json.loads(record.read_text(encoding="utf-8"))
    data[field] = value
    record.write_text(json.dumps(data), encoding="utf-8")
    yml = tmp_path / "environment.yml"
    yml.write_text("name: x\nchannels: [conda-forge]\ndependencies:\n  - zlib\n", encoding="utf-8")
    argvs = {
        "snapshot": ["snapshot", "--no-probe", str(prefix)],
        "export": ["export", str(prefix)],
        "check": ["check", str(prefix), "-f", str(yml)],
        "check --files": ["check", str(prefix), "--files", "-f", str(yml)],
        "diff": ["diff", str(prefix), str(yml)],
        "lock": ["lock", str(prefix), "--no-probe", "-o", str(tmp_path / "l.yml")],
    }
    for command in commands:
        argv = argvs[command]
        assert envguard(*argv) == 2, argv
        line = _one_error_line(capsys)
        assert record.name in line and f"$.{field}: Expected" in line, (argv, line)


def test_an_unknown_platform_is_exit_2(channels: dict[str, Path], tmp_path: Path, capsys) -> None:
    yml = tmp_path / "environment.yml"
    yml.write_text(
        f"name: x\nchannels:\n  - {channels['forge'].resolve().as_uri()}\ndependencies:\n  - zlib\n",
        encoding="utf-8",
    )
    for platform in ("bogus", "linux-65", "noarch"):
        assert envguard("lock", "-f", str(yml), "--platform", platform, "--no-cuda") == 2
        line = _one_error_line(capsys)
        assert repr(platform) in line and "linux-64" in line


def test_a_lock_without_hashes_is_exit_2(channels: dict[str, Path], tmp_path: Path, capsys) -> None:
    yml = tmp_path / "environment.yml"
    yml.write_text(
        f"name: x\nchannels:\n  - {channels['forge'].resolve().as_uri()}\nplatforms: [linux-64]\n"
        "dependencies:\n  - zlib\n",
        encoding="utf-8",
    )
    lock = tmp_path / "conda-linux-64.lock"
    assert envguard("lock", "-f", str(yml), "--no-cuda", "--format", "explicit", "-o", str(lock)) == 0
    lines = lock.read_text(encoding="utf-8").splitlines()
    lock.write_text("\n".join(ln.split("#", 1)[0] if "://" in ln else ln for ln in lines) + "\n")
    capsys.readouterr()
    assert envguard("create", "--lock", str(lock), "-p", str(tmp_path / "env")) == 2
    assert "no sha256 or md5" in _one_error_line(capsys)
    assert not (tmp_path / "env").exists()


def test_only_commands_with_no_probe_advise_it(make_prefix: MakePrefix, tmp_path: Path, capsys) -> None:
    prefix = make_prefix(["zlib"])  # no python: the probe cannot run
    assert envguard("snapshot", str(prefix)) == 2
    assert "use --no-probe" in _one_error_line(capsys)
    assert envguard("diff", "--probe", str(prefix), str(prefix)) == 2
    line = _one_error_line(capsys)
    assert "without --probe" in line and "--no-probe" not in line
    assert envguard("smoke", str(prefix)) == 2
    assert "--no-probe" not in _one_error_line(capsys)


def test_a_record_not_utf8_in_a_field_envguard_skips_is_exit_2(tmp_path: Path, capsys) -> None:
    """Bytes that are not UTF-8 in a key envguard's typed read skips (the file fuzz's case: exit 4, msgspec's
    DecodeError from the whole record's second read) are a corrupt record naming the file."""
    prefix = tmp_path / "env"
    (prefix / "conda-meta").mkdir(parents=True)
    record = {"name": "zlib", "version": "1.3.1", "build": "h0_0", "build_number": 0, "XX": "linux-64"}
    text = json.dumps(record).encode().replace(b"XX", b"sub\xffdir")
    (prefix / "conda-meta" / "zlib-1.3.1-h0_0.json").write_bytes(text)
    assert envguard("export", str(prefix), "--format", "cyclonedx") == 2
    line = _one_error_line(capsys)
    assert "zlib-1.3.1-h0_0.json" in line and "UTF-8" in line, line
