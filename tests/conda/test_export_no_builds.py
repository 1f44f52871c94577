"""`envguard export --no-builds` and `--relax minor|major` → the real `conda env create` → `envguard check`:
against the source's lock clean where the pins allow only the locked versions, against the exported file
always; a CUDA environment's stripped export keeps its choice (`pytorch=2.1.0=*cuda11.8*`), so conda fails
without `__cuda` and builds the same environment with it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.helpers import MakePrefix, envguard
from tests.realconda import Conda

pytestmark = pytest.mark.slow


def _export(source: Path, out: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> list[str]:
    capsys.readouterr()
    assert envguard("export", str(source), *flags, "-o", str(out)) == 0, capsys.readouterr().err
    return [d for d in yaml.safe_load(out.read_text())["dependencies"] if isinstance(d, str)]


def _lock(prefix: Path, tmp_path: Path) -> Path:
    lock = tmp_path / "lock" / "conda-lock.yml"
    lock.parent.mkdir()
    assert envguard("lock", str(prefix), "--no-probe", "-o", str(lock)) == 0
    return lock


def _create_and_check(
    conda: Conda, yml: Path, lock: Path, target: Path, capsys: pytest.CaptureFixture[str], **env: str
) -> None:
    conda.run("env", "create", "--yes", "--file", str(yml), "--prefix", str(target), env=env)
    capsys.readouterr()
    assert envguard("check", str(target), "--lock", str(lock)) == 0, capsys.readouterr().out


@pytest.mark.parametrize(
    ("flags", "numpy"),
    [
        (("--no-builds",), "numpy=1.26.4"),
        (("--no-builds", "--relax", "minor"), "numpy=1.26.*"),
        (("--relax", "major"), None),  # pinned: numpy is asked for, so it is written
    ],
)
def test_stripped_and_relaxed_exports_round_trip_through_conda(
    flags: tuple[str, ...],
    numpy: str | None,
    conda: Conda,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    prefix = tmp_path / "src"
    conda.run("create", "--yes", "--prefix", str(prefix), "python=3.11", "numpy=1.26", "six")
    lock = _lock(prefix, tmp_path)
    lines = _export(prefix, tmp_path / "env.yml", capsys, *flags)
    listed = {p["name"]: p for p in conda.listed(prefix)}
    if "--no-builds" in flags:
        assert [line.split("=")[0] for line in lines] == sorted(listed)  # every package, like conda's
        assert all(line.count("=") == 1 and "::" not in line for line in lines), lines
        assert numpy in lines
        if "--relax" not in flags:  # the peer: conda's own --no-builds export of the same environment
            theirs = yaml.safe_load(conda.run("env", "export", "--no-builds", "-p", str(prefix)).stdout)
            assert lines == [d for d in theirs["dependencies"] if isinstance(d, str)]
    else:
        assert lines == ["numpy=1.*", "python=3.*", "six=1.*"], lines
        # major lets the solver move on: the channel's newest python 3 (3.12) is a legal choice, so the new
        # environment satisfies the exported file but not the lock
        conda.run(
            "env", "create", "--yes", "--file", str(tmp_path / "env.yml"), "--prefix", str(tmp_path / "new")
        )
        new = {p["name"]: p["version"] for p in conda.listed(tmp_path / "new")}
        assert new["python"].split(".")[0] == "3" and new["numpy"].split(".")[0] == "1", new
        capsys.readouterr()
        code = envguard("check", str(tmp_path / "new"), "-f", str(tmp_path / "env.yml"))
        assert code == 0, capsys.readouterr().out
        return
    _create_and_check(conda, tmp_path / "env.yml", lock, tmp_path / "new", capsys)


def test_no_builds_export_of_a_cuda_env_keeps_the_cuda_choice(
    conda: Conda, make_prefix: MakePrefix, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gpu = make_prefix(["pytorch=2.1=*cuda11.8*", "python=3.11"], name="gpu", cuda="12.4")
    lock = _lock(gpu, tmp_path)
    lines = _export(gpu, tmp_path / "gpu.yml", capsys, "--no-builds", "--relax", "minor")
    assert "pytorch=2.1.*=*cuda11.8*" in lines, lines
    yml = tmp_path / "gpu.yml"
    done = conda.run(
        "env",
        "create",
        "--yes",
        "--file",
        str(yml),
        "--prefix",
        str(tmp_path / "cpu-machine"),
        check=False,
        env={"CONDA_OVERRIDE_CUDA": ""},
    )
    assert done.returncode != 0 and "UnsatisfiableError" in done.stderr, done.stderr[-2000:]
    _create_and_check(conda, yml, lock, tmp_path / "gpu-machine", capsys, CONDA_OVERRIDE_CUDA="12.4")
