"""The CLI fuzz's finds (tests/fuzz/test_argv.py, issue 42), each minimised: an argument the file system
cannot even look up (a name longer than NAME_MAX, a path longer than PATH_MAX), a file where a folder belongs,
a CUDA version that is not one, a path that is not UTF-8 in an error report. Each was exit 4 (OSError,
NotADirectoryError, rattler's InvalidVersionError, UnicodeEncodeError); each is now one line, exit 2 or 3."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from envguard.cli.boundary import guarded
from tests.fuzz.strategies import RECORD
from tests.helpers import envguard

NAME = "x" * 300  # longer than NAME_MAX (255)


def _long(tmp_path: Path) -> str:
    return str(tmp_path) + "/d" * 3000  # longer than PATH_MAX (4096)


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "internal error" not in err and "Traceback" not in err, err
    assert err.count("\n") == 1 and err.startswith("envguard: error: "), err
    return err


@pytest.mark.parametrize(
    "argv",
    [
        ["name", NAME],
        ["name", "<long>"],
        ["verify", "--lock", "<long>"],
        ["verify", "--pkgs-dir", "<long>"],
        ["create", "-n", "x", "--lock", NAME],
        ["create", "--lock", "<long>"],
        ["clean", "--env", NAME],
        ["clean", "--pixi-root", "<long>"],
    ],
)
def test_a_path_too_long_is_bad_input(tmp_path: Path, capsys, argv: list[str]) -> None:
    argv = [str(_long(tmp_path)) if word == "<long>" else word for word in argv]
    assert envguard(*argv, cwd=tmp_path) == 2
    _one_line(capsys)


def test_clean_cache_too_long_is_not_a_cache(tmp_path: Path, capsys) -> None:
    """`--cache NAME` the file system cannot look up is no package cache, as a missing folder is."""
    missing = envguard("clean", "--cache", str(tmp_path / "missing"), cwd=tmp_path)
    said = capsys.readouterr()
    assert envguard("clean", "--cache", str(tmp_path / NAME), cwd=tmp_path) == missing
    err = capsys.readouterr().err
    assert "internal error" not in err and err.count("\n") == said.err.count("\n"), err


def test_output_too_long_is_one_line(tmp_path: Path, capsys) -> None:
    assert envguard("clean", "--undo", "-o", _long(tmp_path), cwd=tmp_path) in (2, 3)
    _one_line(capsys)


def test_create_prefix_that_is_a_file(tmp_path: Path, capsys) -> None:
    env = tmp_path / "env"
    (env / "conda-meta").mkdir(parents=True)
    (env / "conda-meta" / "zlib-1.3.1-h0_0.json").write_text(
        json.dumps({**RECORD, "files": [], "md5": "0" * 32, "sha256": "a" * 64})
    )
    assert envguard("lock", str(env), "--no-probe", "-o", str(tmp_path / "conda-lock.yml")) == 0
    target = tmp_path / "file"
    target.write_text("not an environment\n")
    capsys.readouterr()
    assert (
        envguard("create", "-p", str(target), "--lock", str(tmp_path / "conda-lock.yml"), cwd=tmp_path) == 2
    )
    assert "not a conda environment" in _one_line(capsys)
    assert target.read_text() == "not an environment\n"


@pytest.mark.parametrize("cuda", ["-", "abc", "12..4", ""])
def test_lock_cuda_that_is_no_version(tmp_path: Path, capsys, cuda: str) -> None:
    envyml = tmp_path / "environment.yml"
    envyml.write_text("name: x\nchannels:\n  - conda-forge\ndependencies:\n  - zlib\n")
    assert envguard("lock", "-f", str(envyml), "--cuda", cuda, cwd=tmp_path) == 2
    err = _one_line(capsys)
    assert "--cuda" in err, err


def test_an_error_report_for_a_path_not_utf8(tmp_path: Path, capsys) -> None:
    """`-o FILE` holds the error of a run whose message names a path that is not UTF-8 (was: the report's
    UTF-8 encoding raised, then the crash log's too, and a traceback escaped the boundary)."""
    report = tmp_path / "report.txt"
    source = os.fsdecode(bytes(tmp_path) + b"/\xff\xfe")
    assert envguard("doctor", source, "-o", str(report), cwd=tmp_path) == 2
    _one_line(capsys)
    assert (
        report.read_text().startswith("envguard doctor: error (exit 2): ") and "\\udcff" in report.read_text()
    )


def test_an_error_report_onto_a_device_writes_through(tmp_path: Path, capsys) -> None:
    """`-o` naming a device (here through a link to /dev/null) is written through when the command fails,
    as when it succeeds: never replaced by a regular file (as root, that was /dev/null itself)."""
    link = tmp_path / "null"
    link.symlink_to("/dev/null")
    assert envguard("doctor", str(tmp_path / "missing"), "--json", "-o", str(link), cwd=tmp_path) == 2
    _one_line(capsys)
    assert link.is_symlink() and os.readlink(link) == "/dev/null"


def test_an_error_report_that_cannot_be_written_keeps_the_error(tmp_path: Path, capsys) -> None:
    """The report's own write failing (here a path too long) leaves the command's error and exit code."""
    assert envguard("doctor", str(tmp_path / "missing"), "-o", _long(tmp_path), cwd=tmp_path) == 2
    assert "no such environment folder" in _one_line(capsys)


def test_a_crash_log_of_a_message_not_utf8(tmp_path: Path, capsys) -> None:
    """The boundary's crash log is written whatever the traceback holds (a lone surrogate from a path)."""

    def crash() -> None:
        raise ValueError("\udcff")

    assert guarded(crash) == 4
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error (ValueError)" in err, err
    log = Path(err.split("Traceback saved to ")[1].split(";")[0])
    assert "ValueError: \\udcff" in log.read_text()
    log.unlink()


@pytest.mark.parametrize("source", ["", "/"])
def test_sync_of_an_empty_source_or_the_root(tmp_path: Path, capsys, source: str) -> None:
    """`sync --lock L ''` names the working folder, which is no environment (the long fuzz's case: exit 4,
    ValueError from the path beside it that a killed sync's leftovers are recorded in); `/` has none."""
    assert envguard("sync", "--lock", str(tmp_path / "conda-lock.yml"), source, cwd=tmp_path) == 2
    _one_line(capsys)
