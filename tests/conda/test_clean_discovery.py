"""`envguard clean` with the real conda on PATH finds the same package caches and environments as `conda info
--json` — from files (the executable's location, CONDA_* variables, .condarc), without spawning conda."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import envguard
from tests.realconda import Conda

pytestmark = pytest.mark.slow

_SPAWNED: list[list[str]] = []
_WATCHING: list[bool] = []


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if _WATCHING and event == "subprocess.Popen":
        argv = args[1]
        _SPAWNED.append([os.fsdecode(a) for a in argv] if isinstance(argv, list | tuple) else [str(argv)])


sys.addaudithook(_hook)  # lasts the session: it records only while a test of this file sets _WATCHING


def _clean_json(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    _SPAWNED.clear()
    _WATCHING.append(True)
    try:
        code = envguard("clean", "--json")
    finally:
        _WATCHING.clear()
    out, err = capsys.readouterr()
    assert code == 0, err
    return dict(json.loads(out))


def test_clean_finds_conda_infos_caches_and_envs_without_running_conda(
    conda: Conda, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    conda.run("create", "--yes", "--json", "-n", "one", "zlib")
    conda.run("create", "--yes", "--json", "-p", str(tmp_path / "elsewhere"), "zlib")
    info = conda.json("info")
    data = _clean_json(capsys)
    assert _SPAWNED == []  # no `conda info --json` (nor anything else)
    conda_pkgs = {os.path.realpath(p) for p in info["pkgs_dirs"] if Path(p).is_dir()}
    ours = {os.path.realpath(c["pkgs"]) for c in data["caches"] if c["kind"] == "conda"}
    # a pkgs dir conda lists but never used (no urls.txt, no package) is seen and skipped, with a note
    seen = ours | {os.path.realpath(n.split(" (")[0]) for n in data["notes"] if "skipped" in n}
    assert conda_pkgs and ours and seen == conda_pkgs, (ours, seen, conda_pkgs)
    mine = os.path.realpath(tmp_path)
    conda_envs = {os.path.realpath(e) for e in info["envs"] if (Path(e) / "conda-meta").is_dir()}
    conda_envs = {e for e in conda_envs if e.startswith(mine)}  # not other users' (conda as root reads all)
    our_envs = {os.path.realpath(e["prefix"]) for e in data["environments"]}
    # conda run as root lists environments.txt of the users in /etc/passwd, not $HOME's, so the -p env
    # it registered in $HOME/.conda/environments.txt is missing from its own list; envguard reads $HOME's
    elsewhere = os.path.realpath(tmp_path / "elsewhere")
    assert conda_envs - {elsewhere} and our_envs == conda_envs | {elsewhere}, (our_envs, conda_envs)


def test_the_root_comes_from_the_executable(conda: Conda, tmp_path: Path, monkeypatch) -> None:
    from envguard.prefix import condaconfig

    info = conda.json("info")
    assert condaconfig.root_prefix() == Path(info["root_prefix"])
    root = tmp_path / "miniforge"  # a real install's layout: ROOT/bin/conda beside ROOT/conda-meta
    (root / "conda-meta").mkdir(parents=True)
    (root / "bin").mkdir()
    (root / "bin" / "conda").write_text("#!/bin/sh\n", encoding="utf-8")
    (root / "bin" / "conda").chmod(0o755)
    (root / ".condarc").write_text(f"envs_dirs: [{tmp_path / 'root-envs'}]\n", encoding="utf-8")
    monkeypatch.setenv("PATH", f"{root / 'bin'}{os.pathsep}{os.environ['PATH']}")
    assert condaconfig.root_prefix() == root
    assert tmp_path / "root-envs" in condaconfig.envs_dirs()  # its root's .condarc is read, as conda does
