"""issue 39 item 2 and issue 44: a venv with a `+cpu`-style local-version wheel from a second index (real
pypiserver) locks with the wheel's URL, sha256 and index, then verifies and syncs with no index configured
anywhere; a tampered wheel is refused before anything is installed; with no uv, pip installs and says so."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from envguard.prefix.pip_dist import read_pip_packages
from tests.channel_server import leaks, serve
from tests.helpers import envguard, make_venv
from tests.pipindex import LOCAL_VERSION, build_wheel

# each test builds venvs and serves a real index: out of scripts/test.sh --quick (issue 43: 48 s of
# its 10.6 min under load 7-11)
pytestmark = pytest.mark.slow


def _install(venv: Path, *args: str) -> None:
    """The test interpreter's real pip acting on the venv (no dependencies)."""
    pip = [
        sys.executable,
        "-m",
        "pip",
        "--python",
        str(venv / "bin" / "python"),
        "install",
        "-q",
        "--no-deps",
    ]
    subprocess.run([*pip, *args], check=True, capture_output=True, text=True)


def _verify_json(lock: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, object]]:
    capsys.readouterr()
    code = envguard("verify", "--lock", str(lock), "--json")
    return code, json.loads(capsys.readouterr().out)


def _install_detail(report: dict[str, object]) -> str:
    stages = report["stages"]
    assert isinstance(stages, list)
    return str(next(s for s in stages if s["name"] == "install")["detail"])


def test_a_local_version_wheel_from_a_second_index_locks_verifies_and_syncs_with_no_index_configured(
    tmp_path: Path, second_index: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    index, packages = second_index
    wheel = next(packages.glob("torchish-*.whl"))
    venv = make_venv(tmp_path / ".venv")
    # the index as a user configures PyTorch's for one environment: the venv's own pip.conf, no variable
    (venv / "pip.conf").write_text(f"[global]\nextra-index-url = {index}\n")
    _install(venv, "--extra-index-url", index, f"torchish=={LOCAL_VERSION}", "helperish==1.0")
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(venv), "--no-probe", "-o", str(lock)) == 0
    data = yaml.safe_load(lock.read_text())
    entries = {e["name"]: e for e in data["package"]}
    torchish = entries["torchish"]
    assert torchish["version"] == LOCAL_VERSION
    assert torchish["url"].startswith(index.removesuffix("simple/")) and torchish["url"].endswith(wheel.name)
    assert torchish["hash"] == {"sha256": hashlib.sha256(wheel.read_bytes()).hexdigest()}
    assert entries["helperish"]["hash"]["sha256"]
    indexes = json.loads(data["metadata"]["custom_metadata"]["envguard.linux-64.pip_indexes"])
    assert indexes == {"helperish": index, "torchish": index}

    (venv / "pip.conf").unlink()  # from here on, nothing says where the index is but the lock
    code, report = _verify_json(lock, capsys)
    assert code == 0, report
    assert "with uv" in _install_detail(report)

    _uninstall(venv, "torchish")
    capsys.readouterr()
    assert envguard("sync", str(venv), "--lock", str(lock), "--yes") == 0, capsys.readouterr()
    assert "uv" in capsys.readouterr().out
    assert {p.name: p.version for p in read_pip_packages(venv)[0]}["torchish"] == LOCAL_VERSION
    assert envguard("check", str(venv), "--lock", str(lock)) == 0


def _uninstall(venv: Path, name: str) -> None:
    pip = [
        sys.executable,
        "-m",
        "pip",
        "--python",
        str(venv / "bin" / "python"),
        "uninstall",
        "-y",
        "-q",
        name,
    ]
    subprocess.run(pip, check=True, capture_output=True, text=True)


def test_a_tampered_wheel_is_refused_before_anything_is_installed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PIP_FIND_LINKS", raising=False)  # it would override the venv's pip.conf, as in pip
    links = tmp_path / "links"
    build_wheel(tmp_path / "src", "torchish", LOCAL_VERSION, links)
    venv = make_venv(tmp_path / ".venv")
    (venv / "pip.conf").write_text(
        f"[global]\nfind-links = {links}\n"
    )  # a find-links folder, as pip reads it
    _install(venv, "--find-links", str(links), f"torchish=={LOCAL_VERSION}")
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(venv), "--no-probe", "-o", str(lock)) == 0
    entry = next(e for e in yaml.safe_load(lock.read_text())["package"] if e["name"] == "torchish")
    wheel = next(links.glob("*.whl"))
    assert entry["url"] == f"file://{wheel}" and entry["hash"]["sha256"]  # `+cpu` plain in the URL

    # the same file name, other bytes: a wheel someone replaced on the index
    shutil.rmtree(tmp_path / "src")
    evil = build_wheel(tmp_path / "src", "torchish", LOCAL_VERSION, tmp_path / "evil", "import os\n")
    shutil.copyfile(evil, wheel)
    capsys.readouterr()
    code, report = _verify_json(lock, capsys)
    assert code == 1
    stages = {s["name"]: s["status"] for s in report["stages"]}  # type: ignore[union-attr]
    assert stages["hashes"] == "failed" and stages["install"] == "skipped"
    assert [m["name"] for m in report["mismatches"]] == ["torchish"]  # type: ignore[union-attr]


def test_with_no_uv_pip_installs_and_the_report_says_so(
    tmp_path: Path,
    second_index: tuple[str, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    index, _packages = second_index
    venv = make_venv(tmp_path / ".venv")
    (venv / "pip.conf").write_text(f"[global]\nextra-index-url = {index}\n")
    _install(venv, "--extra-index-url", index, "helperish==1.0")
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(venv), "--no-probe", "-o", str(lock)) == 0
    monkeypatch.setenv("ENVGUARD_UV", str(tmp_path / "nonexistent"))
    code, report = _verify_json(lock, capsys)
    assert code == 0, report
    assert "with pip (uv not found)" in _install_detail(report)
    monkeypatch.setenv("ENVGUARD_PIP_ENGINE", "uv")
    assert envguard("verify", "--lock", str(lock)) == 2  # asked for uv, and there is none: one line
    assert "no uv runs here" in capsys.readouterr().err


def test_conda_lock_installs_every_pip_package_of_the_lock(
    tmp_path: Path, second_index: tuple[str, Path], channels: dict[str, Path]
) -> None:
    """conda-lock install's pip step, as conda-lock 4.0.3 runs it: its own renderer turns the lock into an
    explicit file, and the `# pip ` lines go to `pip install --no-deps -r` (here real pip into a fresh venv;
    the fixture's conda python is a launcher of the test interpreter, where pip would install elsewhere). A
    package with no file known is no line at all (pip would reject `NAME @ NAME==VERSION` and every other
    with it)."""
    from conda_lock.conda_lock import render_lockfile_for_platform
    from conda_lock.lockfile import parse_conda_lock_file

    index, _packages = second_index
    wheels = channels["wheels"]
    venv = make_venv(tmp_path / ".venv")
    (venv / "pip.conf").write_text(f"[global]\nextra-index-url = {index}\n")
    _install(venv, "--extra-index-url", index, f"torchish=={LOCAL_VERSION}", "helperish==1.0")
    _install(venv, "--no-index", "--find-links", str(wheels), "other-pkg")  # a folder no config names
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(venv), "--no-probe", "-o", str(lock)) == 0
    lines = render_lockfile_for_platform(
        lockfile=parse_conda_lock_file(lock),
        kind="explicit",
        platform="linux-64",
        include_dev_dependencies=False,
        extras=set(),
        suppress_warning_for_pip_and_explicit=True,
    )
    requirements = tmp_path / "requirements.txt"
    requirements.write_text(
        "".join(f"{line.split('# pip ', 1)[1]}\n" for line in lines if line.startswith("# pip "))
    )
    target = make_venv(tmp_path / "target")
    _install(target, "--no-index", "-r", str(requirements))  # pip checks each `#sha256=` as it installs
    installed = {p.name: p.version for p in read_pip_packages(target)[0]}
    assert installed == {"torchish": LOCAL_VERSION, "helperish": "1.0"}
    assert "other-pkg==0.3.0" in lock.read_text()  # in envguard's metadata, and the header names it
    assert envguard("check", str(venv), "--lock", str(lock)) == 0  # envguard still reads all three


def test_an_index_behind_credentials_is_locked_and_verified_with_no_credential_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An index whose URL carries a user:password and an anaconda.org-style /t/TOKEN (a real HTTP server that
    serves a static PEP 503 tree): the lock records the wheel and index without either, and verify installs
    it; neither appears in any output or the lock."""
    root = tmp_path / "index"
    wheel = build_wheel(tmp_path / "src", "torchish", LOCAL_VERSION, root / "files")
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    page = root / "simple" / "torchish" / "index.html"
    page.parent.mkdir(parents=True)
    page.write_text(
        f'<html><body><a href="../../files/{wheel.name}#sha256={digest}">{wheel.name}</a></body></html>'
    )
    with serve(root) as base:
        index = f"{base}/simple/"
        venv = make_venv(tmp_path / ".venv")
        (venv / "pip.conf").write_text(f"[global]\nextra-index-url = {index}\n")
        _install(venv, "--extra-index-url", index, f"torchish=={LOCAL_VERSION}")
        lock = tmp_path / "conda-lock.yml"
        capsys.readouterr()
        assert envguard("lock", str(venv), "--no-probe", "-o", str(lock)) == 0
        said = capsys.readouterr()
        entry = next(e for e in yaml.safe_load(lock.read_text())["package"] if e["name"] == "torchish")
        assert entry["hash"] == {"sha256": digest}
        code, report = _verify_json(lock, capsys)
        assert code == 0, report
        assert leaks(lock.read_text(), json.dumps(report), said.out, said.err, *capsys.readouterr()) == []
