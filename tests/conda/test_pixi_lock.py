"""`envguard lock --format pixi` with the real conda: conda-lockfiles' rattler-lock-v6 reader installs the
lock into the identical environment (`conda create --file pixi.lock`), and envguard reads the lock as it reads
conda's own `conda export --format rattler-lock-v6` of the same environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from envguard.formats import pixilock
from tests.helpers import envguard
from tests.realconda import Conda, package_keys

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("live", [True, False])
def test_pixi_lock_installs_with_conda_create_file(
    live: bool, conda: Conda, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "src"
    conda.run("create", "--yes", "--prefix", str(src), "python=3.11", "numpy=1.26", "six")
    pixi = tmp_path / "lock" / "pixi.lock"
    pixi.parent.mkdir()
    if live:
        assert envguard("lock", str(src), "--no-probe", "--format", "pixi", "-o", str(pixi)) == 0
    else:
        yml = tmp_path / "environment.yml"
        channels = "".join(f"  - {c}\n" for c in conda.kit.channels)
        yml.write_text(f"channels:\n{channels}dependencies:\n  - python=3.11\n  - numpy=1.26\n  - six\n")
        assert envguard("lock", "-f", str(yml), "--no-cuda", "--format", "pixi", "-o", str(pixi)) == 0
    target = tmp_path / "copy"
    conda.run("create", "--yes", "--prefix", str(target), "--file", str(pixi))
    assert package_keys(conda.listed(target)) == package_keys(conda.listed(src))
    capsys.readouterr()
    assert envguard("check", str(target), "--lock", str(pixi)) == 0, capsys.readouterr().out
    theirs = tmp_path / "conda-export" / "pixi.lock"
    theirs.parent.mkdir()
    conda.run("export", "-p", str(src), "--format", "rattler-lock-v6", "--file", str(theirs))
    ours_env, theirs_env = pixilock.read(pixi), pixilock.read(theirs)
    fields = ("name", "version", "build", "build_number", "channel", "subdir", "url", "md5", "sha256")
    assert {tuple(getattr(p, f) for f in fields) for p in ours_env.packages} == {
        tuple(getattr(p, f) for f in fields) for p in theirs_env.packages
    }
    assert {p.name: sorted(p.depends) for p in ours_env.packages} == {
        p.name: sorted(p.depends) for p in theirs_env.packages
    }
