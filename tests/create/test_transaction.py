"""`create --force` never loses the old environment (issue 11, D2/W5/W6): a replacement that fails leaves it
byte-identical and registered, nothing half-made stays behind, and concurrent registrations are all kept."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from envguard.prefix.condaconfig import environments_txt, registered_environments, unregister
from tests.helpers import envguard, mounted, prefix_tree


def test_a_failed_force_create_leaves_the_old_env_byte_identical(
    channels: dict[str, Path], tmp_path: Path, isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    forge = channels["forge"].resolve().as_uri()
    yml = tmp_path / "src" / "environment.yml"
    yml.parent.mkdir()
    yml.write_text(f"name: x\nchannels:\n  - {forge}\ndependencies:\n  - python=3.11\n  - zlib\n")
    assert envguard("create", "-f", str(yml), "-n", "work") == 0
    work = isolated_home / ".conda" / "envs" / "work"
    (work / "my-notes.txt").write_text("the user's own file")
    before = prefix_tree(work)
    lock = yml.parent / "conda-lock.yml"
    text = lock.read_text()
    digest = re.search(r"sha256: ([0-9a-f]{64})", text)
    assert digest is not None
    lock.write_text(text.replace(digest.group(1), "f" * 64))  # one archive no longer matches its lock
    capsys.readouterr()
    assert envguard("create", "--lock", str(lock), "-n", "work", "--force") == 3
    assert prefix_tree(work) == before, "the old environment changed"
    assert work in registered_environments()
    leftovers = [p.name for p in work.parent.iterdir() if p.name.startswith(".")]
    assert leftovers == []


def test_a_failed_new_create_leaves_nothing_registered_or_on_disk(
    channels: dict[str, Path], tmp_path: Path, isolated_home: Path
) -> None:
    forge = channels["forge"].resolve().as_uri()
    yml = tmp_path / "environment.yml"
    # the conda part installs, then the pip step fails (no such wheel anywhere): the half env must go
    yml.write_text(
        f"name: x\nchannels:\n  - {forge}\ndependencies:\n  - python=3.11\n  - pip\n"
        "  - pip:\n    - --no-index\n    - no-such-package-anywhere==1.0\n"
    )
    code = envguard("create", "-f", str(yml), "-n", "half")
    assert code in (2, 3)
    half = isolated_home / ".conda" / "envs" / "half"
    assert not half.exists()
    assert half not in registered_environments()
    assert str(half) not in (environments_txt().read_text() if environments_txt().exists() else "")


def test_concurrent_registrations_are_all_kept(tmp_path: Path, isolated_home: Path) -> None:
    prefixes = [tmp_path / f"env{i}" for i in range(8)]
    script = (
        "import sys; from pathlib import Path; from envguard.prefix.condaconfig import register\n"
        "for i in range(15): register(Path(sys.argv[1] + f'-{i}'))\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(p)], env=os.environ.copy()) for p in prefixes
    ]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    lines = set(environments_txt().read_text().split())
    wanted = {f"{p}-{i}" for p in prefixes for i in range(15)}
    assert wanted <= lines, f"{len(wanted - lines)} of {len(wanted)} registrations were lost"


def test_an_env_left_aside_by_a_killed_create_is_restored(
    channels: dict[str, Path], isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["create", "-c", channels["forge"].resolve().as_uri(), "python=3.11", "zlib", "--name", "kept"]
    assert envguard(*args) == 0
    work = isolated_home / ".conda" / "envs" / "kept"
    before = prefix_tree(work)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    aside = work.with_name(f".kept.envguard-old-{int(dead.stdout)}")
    work.rename(aside)  # what SIGKILL mid `create --force` leaves: the old env aside, the new one half-made
    (work / "lib").mkdir(parents=True)
    capsys.readouterr()
    assert envguard(*args) == 2  # the restored env exists: without --force it is not replaced
    assert "already exists" in capsys.readouterr().err
    assert prefix_tree(work) == before and not aside.exists()


# --- issue 28: one lock per target, and a journal that survives SIGKILL ------------------------------------


def _python_records(prefix: Path) -> list[str]:
    return sorted(p.name for p in (prefix / "conda-meta").glob("python-3*.json"))


def _complete(prefix: Path) -> bool:
    """A whole environment: one python and one zlib record, the interpreter and the history envguard writes
    last."""
    meta = prefix / "conda-meta"
    return (
        len(_python_records(prefix)) == 1
        and len(list(meta.glob("zlib-*.json"))) == 1
        and (prefix / "bin" / "python").exists()
        and (meta / "history").is_file()
    )


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def _create(forge: str, python: str, name: str, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "envguard",
            "create",
            "-c",
            forge,
            f"python={python}",
            "zlib",
            "-n",
            name,
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


@pytest.mark.slow
def test_twenty_rounds_of_two_concurrent_creates_leave_one_env_and_one_refusal(
    channels: dict[str, Path], isolated_home: Path
) -> None:
    """Finding 1: without a lock on the target both runs linked into one prefix (both exit 0), or one's
    cleanup deleted the other's environment."""
    forge = channels["forge"].resolve().as_uri()
    race = isolated_home / ".conda" / "envs" / "race"
    for round_ in range(20):
        if race.exists():
            shutil.rmtree(race)
            unregister(race)
        runs = {"3.11": _create(forge, "3.11", "race"), "3.12": _create(forge, "3.12", "race")}
        done = {python: (proc.wait(timeout=300), proc.communicate()[1]) for python, proc in runs.items()}
        codes = sorted(code for code, _err in done.values())
        assert codes == [0, 2], f"round {round_}: {done}"
        winner = next(python for python, (code, _err) in done.items() if code == 0)
        refusal = next(err for code, err in done.values() if code == 2)
        assert "already exists" in refusal or "is being changed by process" in refusal, refusal
        assert len(refusal.strip().splitlines()) <= 2, refusal  # at most "waiting for ..." and the error
        assert _complete(race), f"round {round_}: {sorted(p.name for p in (race / 'conda-meta').iterdir())}"
        assert _python_records(race)[0].startswith(f"python-{winner}"), (winner, _python_records(race))
        assert environments_txt().read_text().split().count(str(race)) == 1
        assert _leftovers(race.parent) == []


def _aside(folder: Path) -> bool:
    return any(".envguard-old-" in p.name for p in folder.iterdir())


def _new(prefix: Path) -> bool:
    return any(p.name.startswith("python-3.12") for p in (prefix / "conda-meta").iterdir())


def _journal_phase(folder: Path) -> str:
    try:
        return str(json.loads((folder / ".work.envguard-journal").read_text())["phase"])
    except (OSError, ValueError, KeyError):
        return ""


@pytest.mark.slow
def test_kill_9_at_any_point_of_create_force_leaves_the_original_restorable(
    channels: dict[str, Path], isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Finding 2: SIGKILL (the OOM killer, a CI timeout) mid `create --force` left the original hidden as
    `.work.envguard-old-PID`, and the next create said "already exists" about the half-built replacement."""
    forge = channels["forge"].resolve().as_uri()
    original = ["create", "-c", forge, "python=3.11", "zlib", "-n", "work"]
    assert envguard(*original) == 0
    work = isolated_home / ".conda" / "envs" / "work"
    envs = work.parent
    (work / "my-notes.txt").write_text("the user's own file")
    before = prefix_tree(work)
    start = time.monotonic()
    assert _create(forge, "3.12", "work-timing").wait(timeout=300) == 0
    took = time.monotonic() - start
    points: list[tuple[str, object]] = [
        ("the journal is written", lambda: (envs / ".work.envguard-journal").exists()),
        ("the old env is aside", lambda: _aside(envs)),
        ("linking has begun", lambda: _aside(envs) and (work / "conda-meta").is_dir()),
        ("python 3.12 is linked", lambda: _aside(envs) and (work / "conda-meta").is_dir() and _new(work)),
        ("the history is written", lambda: _aside(envs) and (work / "conda-meta" / "history").is_file()),
        ("the replacement is complete", lambda: _journal_phase(envs) == "done"),
        *[
            (f"{k * 10}% of a create's time", lambda k=k: time.monotonic() - t0 > took * k / 10)
            for k in range(1, 10)
        ],
    ]
    killed_at: list[str] = []
    for label, reached in points:
        t0 = time.monotonic()
        proc = _create(forge, "3.12", "work", "--force")
        while proc.poll() is None and not reached():  # type: ignore[operator]
            time.sleep(0.0005)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            killed_at.append(label)
        proc.wait(timeout=60)
        capsys.readouterr()
        code = envguard(*original)  # the next command on that name, without --force
        err = capsys.readouterr().err
        assert code == 2 and "already exists" in err, (label, code, err)
        if any(r.startswith("python-3.12") for r in _python_records(work)):  # killed once it was complete
            assert _complete(work) and not (work / "my-notes.txt").exists(), label
            assert envguard(*original, "--force") == 0
            (work / "my-notes.txt").write_text("the user's own file")
            before = prefix_tree(work)
        assert prefix_tree(work) == before, f"killed when {label}: the original environment changed"
        assert work in registered_environments(), label
        assert _leftovers(envs) == [], (label, _leftovers(envs))
    assert len(killed_at) >= 8, killed_at  # most points were reached before the create finished


@pytest.fixture
def read_only() -> Iterator[Callable[[Path], None]]:
    """make(folder): a real read-only file system mounted on `folder` (an empty ro tmpfs; needs root)."""
    with contextlib.ExitStack() as stack:
        yield lambda folder: stack.enter_context(
            mounted(["-t", "tmpfs", "-o", "ro,size=1m", "tmpfs"], folder)
        )


def test_a_read_only_registry_warns_and_keeps_the_env(
    channels: dict[str, Path],
    tmp_path: Path,
    isolated_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    read_only: Callable[[Path], None],
) -> None:
    """Finding 10: the registry's lock file could not be opened on a read-only ~/.conda: a traceback, exit 4;
    conda warns and keeps the environment, and so does envguard."""
    envs = tmp_path / "envs"
    monkeypatch.setenv("CONDA_ENVS_PATH", str(envs))
    read_only(isolated_home / ".conda")
    capsys.readouterr()
    assert envguard("create", "-c", channels["forge"].resolve().as_uri(), "zlib", "-n", "kept") == 0
    err = capsys.readouterr().err
    assert "environments.txt" in err and "Read-only file system" in err and "internal error" not in err, err
    assert (envs / "kept" / "conda-meta").is_dir()
    assert _leftovers(envs) == []


def test_a_read_only_package_cache_is_exit_3(
    channels: dict[str, Path],
    isolated_home: Path,
    capsys: pytest.CaptureFixture[str],
    read_only: Callable[[Path], None],
) -> None:
    read_only(isolated_home / ".cache" / "envguard")
    capsys.readouterr()
    assert envguard("create", "-c", channels["forge"].resolve().as_uri(), "zlib", "-n", "nowhere") == 3
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Read-only file system" in err, err
    assert not (isolated_home / ".conda" / "envs" / "nowhere").exists()


def test_check_of_an_environment_a_killed_create_left_half_built_says_so(
    channels: dict[str, Path], isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A read-only command does not restore (only a command holding the target's lock does), but check says
    that what it reads is a half-built replacement, not the environment, and what puts the original back."""
    forge = channels["forge"].resolve().as_uri()
    original = ["create", "-c", forge, "python=3.11", "zlib", "-n", "work"]
    assert envguard(*original) == 0
    work = isolated_home / ".conda" / "envs" / "work"
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(work), "--no-probe", "-o", str(lock)) == 0
    capsys.readouterr()
    assert envguard("check", str(work), "--lock", str(lock)) == 0
    assert "half-built" not in capsys.readouterr().err
    for _attempt in range(5):  # the kill must land while the original is aside
        proc = _create(forge, "3.12", "work", "--force")
        while proc.poll() is None and not (_aside(work.parent) and (work / "conda-meta").is_dir()):
            time.sleep(0.0005)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=60)
            break
        proc.wait(timeout=60)
        assert envguard(*original, "--force") == 0
    else:
        pytest.skip("the create finished before the kill five times")
    capsys.readouterr()
    envguard("check", str(work), "--lock", str(lock))
    err = capsys.readouterr().err
    assert f"{work} is half-built" in err and "puts the original back first" in err, err
    assert envguard(*original) == 2  # the next create restores the original first (then: it exists)
    capsys.readouterr()
    assert envguard("check", str(work), "--lock", str(lock)) == 0
    assert "half-built" not in capsys.readouterr().err
