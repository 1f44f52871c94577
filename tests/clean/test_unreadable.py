"""Unreadable files are reported, never a crash, and never a reason to remove something.

The tests run envguard in a real second process. When the tests run as root (who reads everything), that
process drops CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH with util-linux `setpriv`, so mode-000 files really are
unreadable to it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.clean.world import age_packages
from tests.helpers import REPO, install

DROP = ["--inh-caps=-dac_override,-dac_read_search", "--bounding-set=-dac_override,-dac_read_search"]


def clean_unprivileged(*argv: str) -> tuple[int, dict[str, Any], str]:
    """Run `envguard clean --json ARGV` as a process that file permissions apply to."""
    command = [sys.executable, "-m", "envguard", "clean", "--json", *argv]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without util-linux setpriv: cannot make a file unreadable")
        command = [setpriv, *DROP, *command]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300, check=False)
    data = json.loads(proc.stdout) if proc.stdout.strip() else {}
    return proc.returncode, data, proc.stderr


@pytest.fixture
def layout(tmp_path: Path, channels: dict[str, Path]) -> tuple[Path, Path]:
    """(cache, env): env uses python 3.11 + zlib; numpy 2.0.1 and python 3.12 sit unused in the cache."""
    pkgs = tmp_path / "pkgs"
    forge = [channels["forge"]]
    env = install(tmp_path / "env", ["python=3.11", "zlib=1.3.1"], forge, cache=pkgs)
    shutil.rmtree(install(tmp_path / "gone", ["python=3.12", "numpy=2.0"], forge, cache=pkgs))
    age_packages(pkgs)
    (pkgs / "cache").mkdir()
    (pkgs / "cache" / "abc.json").write_text("{}")
    return pkgs, env


def _unused(data: dict[str, Any]) -> set[str]:
    return {
        Path(i["paths"][0]).name.split("-")[0] for i in data["items"] if i["category"] == "unused-package"
    }


def _restore(*paths: Path) -> None:
    for path in paths:
        path.chmod(0o755 if path.is_dir() else 0o644)


def test_unreadable_index_json_keeps_that_package(layout: tuple[Path, Path]) -> None:
    pkgs, env = layout
    index = next(pkgs.glob("numpy-2.0.1-*/")) / "info" / "index.json"
    index.chmod(0)
    try:
        code, data, err = clean_unprivileged("--cache", str(pkgs), "--env", str(env), "--yes")
    finally:
        _restore(index)
    assert code == 0, err
    assert _unused(data) == {"python"}
    assert any("index.json" in p and "cannot read" in p for p in data["problems"])
    assert any(pkgs.glob("numpy-2.0.1-*/")) and not any(pkgs.glob("python-3.12.4-*/"))


def test_unreadable_folder_inside_a_package_keeps_it(layout: tuple[Path, Path]) -> None:
    pkgs, env = layout
    folder = next(pkgs.glob("numpy-2.0.1-*/")) / "lib"
    folder.chmod(0)
    try:
        code, data, err = clean_unprivileged("--cache", str(pkgs), "--env", str(env))
    finally:
        _restore(folder)
    assert code == 0, err
    assert _unused(data) == {"python"}
    assert data["kept"]["unreadable"] == 1
    assert any(str(folder) in p and "size is unknown" in p for p in data["problems"])


def test_unreadable_record_still_protects_its_package(layout: tuple[Path, Path]) -> None:
    pkgs, env = layout
    record = next((env / "conda-meta").glob("zlib-*.json"))
    record.chmod(0)
    try:
        code, data, err = clean_unprivileged("--cache", str(pkgs), "--env", str(env))
    finally:
        _restore(record)
    assert code == 0, err
    assert "zlib" not in _unused(data)
    assert any(record.name in p and "protected by the record's file name" in p for p in data["problems"])


def test_unlistable_conda_meta_removes_no_package(layout: tuple[Path, Path]) -> None:
    pkgs, env = layout
    meta = env / "conda-meta"
    meta.chmod(0)
    try:
        code, data, err = clean_unprivileged("--cache", str(pkgs), "--env", str(env))
    finally:
        _restore(meta)
    assert code == 0, err
    assert data["usage_complete"] is False and _unused(data) == set()
    assert data["kept"]["package kept: environment usage unknown"] == 4, (
        "python x2, zlib, numpy: none is known used"
    )
    assert {i["category"] for i in data["items"]} == {"index-cache"}
