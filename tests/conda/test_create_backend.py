"""`envguard create --backend conda` against the real conda 26.7.1 CLI: locks, environment.yml, errors, and
the same environment as `--backend embedded`."""

from __future__ import annotations

import io
import json
import subprocess
import tarfile
from pathlib import Path

import pytest

from tests.helpers import envguard
from tests.realconda import Conda, package_keys

pytestmark = pytest.mark.slow


def conda_env(conda: Conda, prefix: Path, *specs: str) -> Path:
    conda.run("create", "--yes", "--prefix", str(prefix), *specs)
    return prefix


def test_create_from_an_explicit_lock_through_conda(
    conda: Conda, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
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


def test_create_from_an_envguard_lock_through_conda(
    conda: Conda, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = conda_env(conda, tmp_path / "src", "python=3.11", "numpy=1.26")
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(source), "--no-probe", "-o", str(lock)) == 0
    target = tmp_path / "dst"
    code = envguard("create", "--lock", str(lock), "--backend", "conda", "--prefix", str(target))
    assert code == 0, capsys.readouterr().err
    assert package_keys(conda.listed(target)) == package_keys(conda.listed(source))


def test_conda_and_embedded_backends_make_the_same_environment(
    conda: Conda, channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    made = {}
    for backend in ("conda", "embedded"):
        folder = tmp_path / backend
        folder.mkdir()
        (folder / "environment.yml").write_text(
            f"channels: [{channels['pytorch'].resolve().as_uri()}, {channels['forge'].resolve().as_uri()}]\n"
            "dependencies: [python=3.11, pytorch=2.1, cpuonly, numpy<2, six]\n"
        )
        capsys.readouterr()
        code = envguard(
            "create",
            "-f",
            str(folder / "environment.yml"),
            "--backend",
            backend,
            "--prefix",
            str(folder / "env"),
        )
        assert code == 0, capsys.readouterr().err
        made[backend] = folder / "env"
    assert package_keys(conda.listed(made["conda"])) == package_keys(conda.listed(made["embedded"]))
    # the same lock but for where each was made (its header's Reproduce line names its environment.yml)
    locks = [
        (tmp_path / b / "conda-lock.yml").read_text().replace(str(tmp_path / b), "FOLDER")
        for b in ("conda", "embedded")
    ]
    assert locks[0] == locks[1], "both backends lock the same packages the same way"
    capsys.readouterr()
    assert envguard("diff", str(made["conda"]), str(made["embedded"])) == 0, capsys.readouterr().out


def test_export_format_explicit_installs_the_identical_env(
    conda: Conda, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = conda_env(conda, tmp_path / "src", "python=3.11", "numpy=1.26", "six")
    explicit = tmp_path / "explicit.txt"
    assert envguard("export", str(source), "--format", "explicit", "-o", str(explicit)) == 0
    target = tmp_path / "dst"
    conda.run("create", "--yes", "--prefix", str(target), "--file", str(explicit))
    assert package_keys(conda.listed(target)) == package_keys(conda.listed(source))
    ours = {ln for ln in explicit.read_text().splitlines() if not ln.startswith("#")}
    theirs = {
        ln
        for ln in conda.run("list", "--explicit", "--sha256", "-p", str(source)).stdout.splitlines()
        if not ln.startswith("#")
    }
    assert ours == theirs, "the same @EXPLICIT lines as conda list --explicit --sha256"


def test_an_embedded_environment_is_not_a_cache_for_backup_tools(
    conda: Conda, channels: dict[str, Path], tmp_path: Path
) -> None:
    target = tmp_path / "env"
    assert (
        envguard(
            "create",
            "--backend",
            "embedded",
            "-c",
            channels["forge"].resolve().as_uri(),
            "python=3.11",
            "--prefix",
            str(target),
            "--no-lock",
        )
        == 0
    )
    assert not (target / "CACHEDIR.TAG").exists()
    listed = subprocess.run(
        ["tar", "--exclude-caches-all", "-cf", "-", "-C", str(tmp_path), "env"],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(listed)) as archive:
        names = archive.getnames()
    assert "env/conda-meta" in names and "env/bin/python" in names, "tar --exclude-caches skipped the env"
    assert {p["name"] for p in conda.listed(target)} == {"python", "zlib"}
