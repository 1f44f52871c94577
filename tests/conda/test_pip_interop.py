"""pip packages in a conda environment made by the real conda 26.7.1: the lock records the wheel's URL and
sha256, `create --lock --backend conda` reinstalls it from there (check clean: same origin), and `check
--files` checks pip's RECORD where conda's records say nothing."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import yaml

from tests.helpers import check_out, envguard, pip_install
from tests.realconda import Conda

pytestmark = pytest.mark.slow


def test_conda_env_pip_wheel_locked_with_url_and_hash_round_trips_through_conda(
    conda: Conda, channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "src"
    conda.run("create", "--yes", "--prefix", str(source), "python=3.11", "six")
    wheel = channels["wheels"] / "tinyproj-1.0.0-py3-none-any.whl"
    pip_install(source, str(wheel))
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(source), "--no-probe", "--include-local", "-o", str(lock)) == 0
    entry = next(e for e in yaml.safe_load(lock.read_text())["package"] if e["name"] == "tinyproj")
    assert entry["url"] == wheel.as_uri()
    assert entry["hash"] == {"sha256": hashlib.sha256(wheel.read_bytes()).hexdigest()}
    target = tmp_path / "dst"
    capsys.readouterr()
    code = envguard("create", "--lock", str(lock), "--backend", "conda", "--prefix", str(target))
    assert code == 0, capsys.readouterr().err
    assert check_out(target, lock, capsys, "--files") == (0, f"OK: {target} matches {lock}\n")
    module = next((target / "lib").glob("python3.*/site-packages")) / "tinyproj" / "__init__.py"
    module.write_text(module.read_text() + "# edited\n")
    code, out = check_out(target, lock, capsys, "--files")
    assert code == 1 and "tinyproj/__init__.py (tinyproj 1.0.0 (pip)): altered" in out, out
