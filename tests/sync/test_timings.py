"""Issue 44: a one-package repair of a venv is the pip engine's work plus envguard's own checks, shown by
stage (`sync --timings`: human table and JSON `timings`); a pip-only sync loads neither rattler nor asyncio;
pip's configured find-links and indexes are passed to uv (not a reason to fall back to pip); with no uv, pip
installs and the report says which engine ran."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from envguard.prefix.pip_dist import read_pip_packages
from tests.helpers import envguard, make_venv

TINY = "tinyproj-1.0.0-py3-none-any.whl"


@pytest.fixture
def short(tmp_path: Path, channels: dict[str, Path]) -> tuple[Path, Path]:
    """(venv, lock): a venv locked with tinyproj (its wheel's URL and sha256), then tinyproj removed."""
    venv = make_venv(tmp_path / ".venv", sys.executable, str(channels["wheels"] / TINY))
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(venv), "--no-probe", "--include-local", "-o", str(lock)) == 0
    _remove(venv, "tinyproj")
    return venv, lock


def _remove(venv: Path, name: str) -> None:
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "uninstall", "-y", "-q"]
    subprocess.run([*pip, name], check=True, capture_output=True, text=True)


def _sync(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = envguard("sync", *argv)
    return code, capsys.readouterr().out


def test_timings_show_where_a_repair_went_by_stage(
    short: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    venv, lock = short
    code, out = _sync(capsys, str(venv), "--lock", str(lock), "--yes", "--timings", "--json")
    assert code == 0, out
    data = json.loads(out)
    stages = [t["stage"] for t in data["timings"]]
    assert stages == ["imports", "read", "plan", "hashes", "pip", "re-check"], data["timings"]
    pip = next(t for t in data["timings"] if t["stage"] == "pip")
    assert pip["detail"] == "uv" and data["backend"] == "uv"
    assert all(isinstance(t["seconds"], float) and t["seconds"] >= 0 for t in data["timings"])
    assert "tinyproj" in {p.name for p in read_pip_packages(venv)[0]}

    _remove(venv, "tinyproj")
    code, out = _sync(capsys, str(venv), "--lock", str(lock), "--yes", "--timings")
    assert code == 0, out
    table = out.split("\nStage", 1)[1].splitlines()
    assert [line.split()[0] for line in table[1:] if line.strip()] == [*stages, "total"], out
    assert all(line.split()[-1] == "ms" or "ms" in line.split() for line in table[1:] if line.strip())


def test_without_timings_nothing_is_shown_and_an_in_sync_answer_is_measured_when_asked(
    short: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    venv, lock = short
    code, out = _sync(capsys, str(venv), "--lock", str(lock), "--yes", "--json")
    assert code == 0 and "timings" not in json.loads(out)
    code, out = _sync(capsys, str(venv), "--lock", str(lock))
    assert code == 0 and "Stage" not in out
    # in sync: the stored answer has no stages to show, so --timings reads the environment again
    code, out = _sync(capsys, str(venv), "--lock", str(lock), "--timings", "--json")
    assert code == 0
    assert [t["stage"] for t in json.loads(out)["timings"]] == ["imports", "read", "plan"]


def test_a_pip_only_sync_loads_neither_rattler_nor_asyncio(short: tuple[Path, Path]) -> None:
    venv, lock = short
    code = (
        "import sys; from envguard.cli.app import run; "
        f"code = run(['sync', {str(venv)!r}, '--lock', {str(lock)!r}, '--yes']); "
        "print(code, sorted(m for m in ('asyncio', 'rattler') "
        "if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.stdout.strip().splitlines()[-1] == "0 []", (done.stdout, done.stderr)


def test_a_configured_find_links_folder_is_passed_to_uv(
    short: tuple[Path, Path],
    channels: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """pip's configuration (here PIP_FIND_LINKS, as a machine's pip.conf may set it) reaches uv as its own
    options; it made uv refuse the command line and pip install instead ("uv could not install into ...")."""
    venv, lock = short
    monkeypatch.setenv("PIP_FIND_LINKS", str(channels["wheels"]))
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", channels["wheels"].as_uri())
    code, out = _sync(capsys, str(venv), "--lock", str(lock), "--yes", "--json")
    assert code == 0, out
    assert json.loads(out)["warnings"] == []
    assert "tinyproj" in {p.name for p in read_pip_packages(venv)[0]}


def test_with_no_uv_pip_repairs_and_the_report_names_it(
    short: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    venv, lock = short
    monkeypatch.setenv("ENVGUARD_UV", str(venv / "no-uv-here"))
    code, out = _sync(capsys, str(venv), "--lock", str(lock), "--yes", "--json")
    assert code == 0, out
    assert json.loads(out)["backend"] == "pip (uv not found)"
    assert "tinyproj" in {p.name for p in read_pip_packages(venv)[0]}
