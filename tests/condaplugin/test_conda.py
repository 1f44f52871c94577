"""envguard's plugin inside the real conda 26.7.1 (envguard installed into conda's base): `conda doctor`
shows envguard's checks, clean, then naming the package a `conda install` added; that `conda install` said so
in one line; the lines printed run as printed; a lock envguard cannot read never fails conda; conda's
start-up imports nothing heavy of envguard's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.realconda import Conda

pytestmark = pytest.mark.slow


def _env(pconda: Conda, tmp_path: Path) -> tuple[Path, Path]:
    """A conda environment of zlib, locked by envguard (which records the lock in it)."""
    prefix = tmp_path / "env"
    pconda.run("create", "-y", "-q", "-p", str(prefix), "zlib")
    lock = tmp_path / "project" / "env.lock.yml"
    lock.parent.mkdir()
    _shell(f"envguard lock {prefix} --no-probe -o {lock}")
    return prefix, lock


def _shell(line: str) -> subprocess.CompletedProcess[str]:
    """Run a line as a user would paste it, with this checkout's envguard first on PATH."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    done = subprocess.run(line, shell=True, capture_output=True, text=True, env={**os.environ, "PATH": path})
    assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
    return done


def _said(done: subprocess.CompletedProcess[str]) -> list[str]:
    """The lines envguard printed into a conda command's output."""
    return [ln for ln in (done.stdout + done.stderr).splitlines() if ln.startswith("envguard:")]


def _doctor(pconda: Conda, prefix: Path, *extra: str) -> str:
    done = pconda.run("doctor", "-p", str(prefix), "envguard-lock", "envguard-torch-family", *extra)
    assert "Traceback" not in done.stdout + done.stderr
    return done.stdout


def test_doctor_lists_envguards_checks(pconda: Conda) -> None:
    listed = pconda.run("doctor", "--list").stdout
    assert "envguard-lock: The environment matches the lock it follows" in listed
    assert "envguard-torch-family: torch, torchvision and torchaudio" in listed


def test_doctor_clean_then_a_drifting_install_is_named_and_its_lines_run_as_printed(
    pconda: Conda, tmp_path: Path
) -> None:
    prefix, lock = _env(pconda, tmp_path)
    report = _doctor(pconda, prefix)
    assert f"✅ envguard: {prefix} matches its lock {lock} (recorded by envguard)" in report
    assert f"✅ envguard: no torch in {prefix}; nothing to check" in report

    installed = pconda.run("install", "-y", "-p", str(prefix), "fill000")
    (line,) = _said(installed)
    assert line.startswith(f"envguard: {prefix} left its lock: +fill000; '")
    report = _doctor(pconda, prefix)
    assert (
        f"❌ envguard: {prefix} differs from its lock {lock} (recorded by envguard): 1 difference(s)"
        in report
    )
    assert "    fill000 1.0.0 h0000000_0" in report and "installed, not in the lock" in report

    restore, accept = line.split("'")[1], line.split("'")[3]
    assert restore == f"envguard sync {prefix} --lock {lock} --yes"  # this envguard has sync
    _shell(restore)  # restores it: the lock again, fill000 gone
    assert f"✅ envguard: {prefix} matches its lock" in _doctor(pconda, prefix)
    assert "fill000" not in {p["name"] for p in pconda.listed(prefix)}

    pconda.run("install", "-y", "-p", str(prefix), "fill000")
    _shell(accept)  # accepts it: the lock now has fill000
    assert f"✅ envguard: {prefix} matches its lock {lock}" in _doctor(pconda, prefix)
    quiet = pconda.run("remove", "-y", "-p", str(prefix), "zlib", "--force")
    assert f"envguard: {prefix} left its lock: -zlib" in quiet.stderr


def test_the_warning_is_switched_off_in_condarc(pconda: Conda, tmp_path: Path) -> None:
    prefix, _lock = _env(pconda, tmp_path)
    pconda.condarc.write_text(pconda.condarc.read_text() + "plugins:\n  envguard_lock_warning: false\n")
    installed = pconda.run("install", "-y", "-p", str(prefix), "fill000")
    assert _said(installed) == []
    assert "fill000" in _doctor(pconda, prefix)  # doctor still tells


def test_a_lock_envguard_cannot_read_never_fails_conda(pconda: Conda, tmp_path: Path) -> None:
    prefix, lock = _env(pconda, tmp_path)
    lock.write_text("garbage: [\n")
    installed = pconda.run("install", "-y", "-p", str(prefix), "fill000")  # exits 0 (checked by run)
    (said,) = _said(installed)
    assert said.startswith(f"envguard: cannot check {prefix} against its lock: {lock}: unknown file kind; ")
    assert "Traceback" not in installed.stdout + installed.stderr
    report = _doctor(pconda, prefix)
    assert f"❌ envguard: cannot check {prefix} against its lock: {lock}: unknown file kind" in report


def test_fix_restores_or_says_what_to_run(pconda: Conda, tmp_path: Path) -> None:
    """`conda doctor --fix`: `envguard sync` where envguard has it; until then the commands that restore,
    which run as printed."""
    prefix, _lock = _env(pconda, tmp_path)
    pconda.run("install", "-y", "-p", str(prefix), "fill000")
    fixed = pconda.run("doctor", "-p", str(prefix), "envguard-lock", "--fix", "--yes", check=False)
    assert "Traceback" not in fixed.stdout + fixed.stderr
    if "cannot restore" in fixed.stdout:
        assert fixed.returncode == 1
        commands = fixed.stdout.split("by itself yet; run:\n", 1)[1].splitlines()
        _shell(commands[0].strip())
    else:
        assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert f"✅ envguard: {prefix} matches its lock" in _doctor(pconda, prefix)


def test_conda_start_up_imports_nothing_heavy_of_envguards(pconda: Conda) -> None:
    """conda loads every plugin's entry point with its plugin manager: envguard's is its hooks module."""
    python = pconda.kit.root / "venv" / "bin" / "python"
    code = (
        "import sys\n"
        "from conda.base.context import context\n"
        "context.__init__()\n"
        "names = set(context.plugin_manager.get_health_checks())\n"
        "assert 'envguard-lock' in names, names\n"
        "print(sorted(m for m in sys.modules if m.startswith('envguard') or m.split('.')[0] in "
        "('rattler', 'rich', 'yaml', 'click', 'deepdiff', 'torch', 'psutil', 'numpy')))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(pconda.kit.root / "src")}
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert (
        done.stdout.strip()
        == "['envguard', 'envguard.condaplugin', 'envguard.condaplugin.hooks', 'envguard.version']"
    )


def test_a_conda_command_with_no_lock_in_play_loads_none_of_envguards_checks(
    pconda: Conda, tmp_path: Path
) -> None:
    """Issue 43: the post-command hook cost ~0.15 s of CPU after every `conda install` on a small environment,
    lock or not. With no lock recorded in the environment and none from the working folder up, it imports
    nothing of envguard's beyond its hooks module; with one, it checks (the tests above)."""
    prefix = tmp_path / "env"
    pconda.run("create", "-y", "-q", "-p", str(prefix), "zlib")
    elsewhere = tmp_path / "no-project"
    elsewhere.mkdir()
    installed = pconda.run(
        "install", "-y", "-p", str(prefix), "fill000", env={"PYTHONPROFILEIMPORTTIME": "1"}, cwd=elsewhere
    )
    imported = {
        line.rsplit("|", 1)[-1].strip() for line in installed.stderr.splitlines() if "import time:" in line
    }
    assert "envguard.version" in imported  # the plugin was loaded (its hooks module imports it)
    assert "envguard.condaplugin.actions" not in imported, sorted(m for m in imported if "envguard" in m)
    assert _said(installed) == []
