"""`envguard verify` of a venv's lock (pip packages only): rebuilt in a fresh venv of the locked Python with
real pip (`--no-deps`, `--require-hashes` for hashed ones) and checked; or one line saying why it cannot."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.helpers import envguard, make_venv


def _venv_lock(tmp_path: Path, wheels: Path) -> Path:
    wheel = wheels / "tinyproj-1.0.0-py3-none-any.whl"  # from its file: URL and sha256 in the lock
    venv = make_venv(
        tmp_path / "proj" / ".venv", sys.executable, str(wheel), "--find-links", str(wheels), "other-pkg"
    )
    lock = tmp_path / "proj" / "conda-lock.yml"
    assert envguard("lock", str(venv), "--no-probe", "--include-local", "-o", str(lock)) == 0
    return lock


def test_pip_only_lock_rebuilds_in_a_fresh_venv_and_checks_clean(
    tmp_path: Path,
    channels: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    scratch: Path,  # where --keep leaves the rebuilt venv
) -> None:
    lock = _venv_lock(tmp_path, channels["wheels"])
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # offline: other-pkg (name==version only) from the wheel folder
    monkeypatch.setenv("PIP_FIND_LINKS", str(channels["wheels"]))
    capsys.readouterr()
    code = envguard("verify", "--lock", str(lock), "--keep", "--json")
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert code == 0, (data, err)
    assert [(s["name"], s["status"]) for s in data["stages"]] == [
        ("hashes", "ok"),
        ("install", "ok"),
        ("check", "ok"),
    ]
    assert "0 conda + 2 pip package(s) into a fresh venv (python " in data["stages"][1]["detail"]
    rebuilt = Path(data["prefix"])
    assert (rebuilt / "pyvenv.cfg").is_file() and not (rebuilt / "conda-meta").exists()
    site = next((rebuilt / "lib").glob("python3.*/site-packages"))
    assert sorted(p.name for p in site.glob("*.dist-info")) == [
        "other_pkg-0.3.0.dist-info",
        "tinyproj-1.0.0.dist-info",
    ]  # the bootstrap pip/setuptools the lock does not have are gone
    assert "other-pkg" in " ".join(data["warnings"])  # installed by version, not verified: said


def test_pip_only_lock_tampered_wheel_hash_fails(
    tmp_path: Path, channels: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    lock = _venv_lock(tmp_path, channels["wheels"])
    text = lock.read_text()
    at = text.index("sha256: ") + len("sha256: ")
    lock.write_text(text[:at] + "cd" * 32 + text[at + 64 :])
    capsys.readouterr()
    code = envguard("verify", "--lock", str(lock), "--json")
    data = json.loads(capsys.readouterr().out)
    assert code == 1 and [m["name"] for m in data["mismatches"]] == ["tinyproj"]


def test_pip_only_lock_without_its_python_here_is_one_line_exit_2(
    tmp_path: Path, channels: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    lock = _venv_lock(tmp_path, channels["wheels"])
    version = ".".join(map(str, sys.version_info[:3]))
    lock.write_text(lock.read_text().replace(f"python: cpython {version}", "python: cpython 3.99.1"))
    capsys.readouterr()
    assert envguard("verify", "--lock", str(lock)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "CPython 3.99.1" in err[0] and "python3.99" in err[0], err
    # a lock that does not say which Python (an older envguard's) says so
    lock.write_text("\n".join(ln for ln in lock.read_text().splitlines() if "python: cpython" not in ln))
    assert envguard("verify", "--lock", str(lock)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "does not say which Python" in err[0], err


def test_a_passing_verify_does_not_parse_the_lock_again(
    tmp_path: Path,
    channels: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 44: verify parsed the whole lock a second time (PyYAML's import and a full parse, past the parse
    cache) for the date it was solved as of, which only a failed verify's re-lock line shows."""
    from envguard.formats.condalock import read as condalock_read

    lock = _venv_lock(tmp_path, channels["wheels"])
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(channels["wheels"]))
    assert envguard("verify", "--lock", str(lock)) == 0, capsys.readouterr()  # the parse is cached now
    parsed: list[str] = []
    real = condalock_read.parse_lock

    def counted(text: str, origin: str = "conda-lock.yml") -> condalock_read.LockData:
        parsed.append(origin)
        return real(text, origin)

    monkeypatch.setattr(condalock_read, "parse_lock", counted)
    assert envguard("verify", "--lock", str(lock)) == 0, capsys.readouterr()
    assert parsed == []


def test_a_verify_without_smoke_loads_no_smoke_module(
    tmp_path: Path, channels: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 44: the smoke feature (its renderer, runner and records, ~70 modules) was imported by every
    verify; only `--smoke` runs it."""
    import subprocess

    lock = _venv_lock(tmp_path, channels["wheels"])
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(channels["wheels"]))
    code = (
        "import sys; from envguard.cli.app import run; "
        f"code = run(['verify', '--lock', {str(lock)!r}, '--json']); "
        "print(code, sorted(m for m in sys.modules if m.startswith('envguard.smoke')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.stdout.strip().splitlines()[-1] == "0 []", (done.stdout[-2000:], done.stderr[-2000:])
