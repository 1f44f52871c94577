"""`envguard create --backend conda` against the real conda 26.7.1 CLI: locks, environment.yml, errors, and the
same environment as `--backend embedded`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import envguard
from tests.realconda import Conda, package_keys

pytestmark = pytest.mark.slow


def conda_env(conda: Conda, prefix: Path, *specs: str) -> Path:
    conda.run("create", "--yes", "--prefix", str(prefix), *specs)
    return prefix


def test_create_from_an_explicit_lock_through_conda(conda: Conda, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    source = conda_env(conda, tmp_path / "src", "python=3.11", "numpy=1.26", "zlib")
    explicit = tmp_path / "explicit.txt"
    explicit.write_text(conda.run("list", "--explicit", "--md5", "-p", str(source)).stdout)
    target = tmp_path / "dst"
    capsys.readouterr()
    code = envguard(
        "create", "--lock", str(explicit), "--backend", "conda", "--prefix", str(target), "--json"
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert (target / "conda-meta").is_dir(), "the prefix conda built must be kept"
    assert package_keys(conda.listed(target)) == package_keys(conda.listed(source))
    data = json.loads(captured.out)
    assert data["backend"] == "conda 26.7.1"
    assert sorted(p["name"] for p in data["packages"]) == ["numpy", "python", "zlib"]
    assert str(target) in (conda.home / ".conda" / "environments.txt").read_text().splitlines()


def test_create_from_an_envguard_lock_through_conda(conda: Conda, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    source = conda_env(conda, tmp_path / "src", "python=3.11", "numpy=1.26")
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(source), "--no-probe", "-o", str(lock)) == 0
    target = tmp_path / "dst"
    code = envguard("create", "--lock", str(lock), "--backend", "conda", "--prefix", str(target))
    assert code == 0, capsys.readouterr().err
    assert package_keys(conda.listed(target)) == package_keys(conda.listed(source))
