"""`export -o FILE` says what it wrote on stderr, as `lock` does, and warns by name when it replaced a file
git tracks (the tour run from a clone's root once overwrote the project's environment.yml without a word)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.helpers import MakePrefix, envguard


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def prefix(make_prefix: MakePrefix) -> Path:
    return make_prefix(["python=3.11", "zlib"])


def test_export_says_what_it_wrote(prefix: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert envguard("export", str(prefix), "-o", "environment.yml", cwd=tmp_path) == 0
    done = capsys.readouterr()
    assert done.out == ""
    assert done.err.splitlines() == ["envguard: wrote environment.yml: 2 conda specs, 0 pip"], done.err
    assert envguard("export", str(prefix), "--format", "explicit", "-o", "spec.txt", cwd=tmp_path) == 0
    assert "envguard: wrote spec.txt: 2 conda packages (explicit)" in capsys.readouterr().err
    assert envguard("export", str(prefix), cwd=tmp_path) == 0  # to stdout: the text is the report
    assert "wrote" not in capsys.readouterr().err


def test_replacing_a_file_git_tracks_is_a_warning(
    prefix: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "clone"
    (project / "envs").mkdir(parents=True)
    _git(project, "init", "-q")
    tracked = project / "envs" / "environment.yml"
    tracked.write_text("name: mine\ndependencies: [python=3.12]\n")
    _git(project, "add", "envs/environment.yml")
    _git(project, "commit", "-qm", "hand-written")
    untracked = project / "envs" / "other.yml"
    untracked.write_text("name: scratch\n")
    capsys.readouterr()
    assert envguard("export", str(prefix), "-o", "envs/other.yml", cwd=project) == 0
    assert "warning" not in capsys.readouterr().err  # replaced, but git never had it
    assert envguard("export", str(prefix), "-o", "envs/environment.yml", cwd=project) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "envguard: wrote envs/environment.yml: 2 conda specs, 0 pip"
    assert err[1] == (
        "envguard: warning: replaced envs/environment.yml, which git tracks: `git diff -- "
        "envs/environment.yml` shows what changed, `git checkout -- envs/environment.yml` restores it"
    )
    assert "name: mine" not in tracked.read_text()
    _git(project, "checkout", "--", "envs/environment.yml")  # the line runs as printed
    assert tracked.read_text() == "name: mine\ndependencies: [python=3.12]\n"
