"""`check --rng` (fingerprints re-measured by the environment's own interpreter) and editable installs that
point elsewhere — both with real interpreters and a real `pip install -e`."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers import MakePrefix, envguard, pip_install

pytestmark = pytest.mark.slow  # the probe imports torch (~2 s); pip builds editable wheels


def _check(prefix: Path, lock: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    capsys.readouterr()
    code = envguard("check", str(prefix), "--lock", str(lock), *extra)
    return code, capsys.readouterr().out


def _bare_interpreter(tmp_path: Path) -> Path:
    """A real Python of the same version without numpy or torch (a fresh venv)."""
    venv = tmp_path / "bare-venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True
    )
    return venv / "bin" / "python"


@pytest.fixture
def probed(make_prefix: MakePrefix, tmp_path: Path) -> tuple[Path, Path]:
    prefix = make_prefix(["python=3.11", "numpy=1.26", "pytorch=2.1.0=*cpu*"])
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(prefix), "-o", str(lock)) == 0  # with the fingerprint probe
    return prefix, lock


def test_rng_clean_then_interpreter_loses_numpy_and_torch(
    probed: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prefix, lock = probed
    assert _check(prefix, lock, capsys, "--rng")[0] == 0
    launcher = prefix / "bin" / "python"
    launcher.unlink()  # installed files are hardlinks into the shared package cache: never edit them in place
    launcher.write_text(f'#!/bin/sh\nexec "{_bare_interpreter(tmp_path)}" "$@"\n')
    launcher.chmod(0o755)
    assert _check(prefix, lock, capsys)[0] == 0  # packages unchanged: only the RNG probe sees it
    code, out = _check(prefix, lock, capsys, "--rng")
    assert code == 1
    for name in ("numpy_legacy", "numpy_generator", "torch_randperm", "dataloader_order"):
        assert re.search(rf"\[drift\] fingerprint {name}: [0-9a-f]{{16}} in the lock, none now", out), out
    assert "RNG fingerprints" in out


def test_rng_detects_a_different_recorded_stream(
    probed: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    prefix, lock = probed
    data = yaml.safe_load(lock.read_text())
    key = "envguard.linux-64.fingerprints"
    recorded = json.loads(data["metadata"]["custom_metadata"][key])
    real = recorded["numpy_generator"]
    recorded["numpy_generator"] = "0" * 64  # the stream a different numpy would have produced
    data["metadata"]["custom_metadata"][key] = json.dumps(recorded)
    lock.write_text(yaml.safe_dump(data, sort_keys=False))
    code, out = _check(prefix, lock, capsys, "--rng")
    assert code == 1
    assert f"[drift] fingerprint numpy_generator: {'0' * 16} in the lock, {real[:16]} now" in out
    assert "numpy_legacy" not in out


def test_rng_needs_recorded_fingerprints(
    make_prefix: MakePrefix, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prefix = make_prefix(["zlib"])
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(prefix), "--no-probe", "-o", str(lock)) == 0
    capsys.readouterr()
    assert envguard("check", str(prefix), "--lock", str(lock), "--rng") == 2
    assert "--rng needs recorded fingerprints" in capsys.readouterr().err


def _project(root: Path, name: str = "proja") -> Path:
    (root / "src" / name).mkdir(parents=True)
    (root / "src" / name / "__init__.py").write_text("VALUE = 1\n")
    (root / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'
        f'[project]\nname = "{name}"\nversion = "0.1.0"\n'
    )
    return root


def _pip_editable(prefix: Path, project: Path) -> None:
    pip_install(prefix, "--no-build-isolation", "--upgrade", "-e", str(project))


def test_editable_install_pointing_elsewhere(
    make_prefix: MakePrefix, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With the path locked (`--include-local`: one machine), another checkout is drift."""
    pytest.importorskip("setuptools")
    first, second = _project(tmp_path / "work" / "proja"), _project(tmp_path / "old-checkout" / "proja")
    prefix = make_prefix(["python=3.11"])
    _pip_editable(prefix, first)
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(prefix), "--no-probe", "--include-local", "-o", str(lock)) == 0
    assert _check(prefix, lock, capsys)[0] == 0
    _pip_editable(prefix, second)  # same name and version, another folder
    code, out = _check(prefix, lock, capsys)
    assert code == 1
    assert (
        f"[drift] proja (pip): 0.1.0 editable from {first.as_uri()} in the lock, 0.1.0 editable from "
        f"{second.as_uri()} installed (url changed)"
    ) in out


def test_a_lock_in_the_checkout_holds_for_another_clone_of_it(
    make_prefix: MakePrefix, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """issue 26: the project installed from its folder is recorded relative to the lock (`url: file:.`, as
    uv.lock records `source = { editable = "." }`), so a lock committed in the checkout holds for any clone of
    it, names no folder of ours, and still tells another folder apart."""
    pytest.importorskip("setuptools")
    first, second = _project(tmp_path / "work" / "proja"), _project(tmp_path / "old-checkout" / "proja")
    subprocess.run(["git", "init", "-q", str(first)], check=True)  # a checkout: its lock is committed
    prefix = make_prefix(["python=3.11"])
    _pip_editable(prefix, first)
    lock = first / "conda-lock.yml"
    assert envguard("lock", str(prefix), "--no-probe", "-o", str(lock)) == 0
    text = lock.read_text()
    assert str(first) not in text and "url: file:.\n" in text, text
    clone_lock = second / "conda-lock.yml"
    clone_lock.write_text(text)  # the clone has the same committed lock
    _pip_editable(prefix, second)
    assert _check(prefix, clone_lock, capsys)[0] == 0
    code, out = _check(prefix, lock, capsys)  # the first checkout's lock means the first checkout
    assert code == 1 and f"editable from {first.as_uri()} in the lock" in out, out
