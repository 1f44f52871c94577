"""engine/target.py: one lock per environment (a second holder waits, then is refused by name) and the journal
that a later holder uses to finish what a killed command left (issue 28, findings 1, 2 and 8)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from envguard.engine import target as targets
from envguard.errors import EXIT_BAD_INPUT
from envguard.prefix.condaconfig import register, registered_prefixes
from tests.helpers import held_elsewhere


def _dead_pid() -> int:
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    return int(done.stdout)


def _journal(target: Path, **fields: object) -> None:
    data = {"pid": _dead_pid(), "command": "envguard create -n work --force", "made": False, "aside": False}
    data |= {"registered": True, "phase": "building", "version": 1, **fields}
    targets.journal_path(target).write_text(json.dumps(data))


def _env(prefix: Path, marker: str) -> Path:
    (prefix / "conda-meta").mkdir(parents=True)
    (prefix / "conda-meta" / "history").write_text(marker)
    return prefix


def test_a_second_holder_is_refused_naming_the_first(tmp_path: Path) -> None:
    target = tmp_path / "envs" / "work"
    with held_elsewhere(target) as holder:
        with pytest.raises(targets.TargetBusy) as refused, targets.hold(target, wait=0.3):
            pass
        message = str(refused.value)
        assert refused.value.exit_code == EXIT_BAD_INPUT
        assert f"process {holder.pid}" in message and "hold(Path(sys.argv[1]))" not in message
        assert str(target) in message and "nothing was changed" in message
    with targets.hold(target, wait=5) as held:  # the kernel dropped the dead holder's flock
        assert held.recovered == []
    assert not targets.lock_path(target).exists()


def test_an_old_environment_left_aside_comes_back_and_the_half_replacement_goes(tmp_path: Path) -> None:
    target = tmp_path / "envs" / "work"
    pid = _dead_pid()
    _env(targets.aside_path(target, pid), "the original")
    _env(target, "half of the replacement")  # conda-meta already there: the old rule skipped this case
    (target / "conda-meta" / "python-3.12.json").write_text("{}")
    _journal(target, pid=pid, aside=True)
    with targets.hold(target) as held:
        assert len(held.recovered) == 1 and "restored" in held.recovered[0] and str(pid) in held.recovered[0]
    assert (target / "conda-meta" / "history").read_text() == "the original"
    assert sorted(p.name for p in target.parent.iterdir()) == ["work"]
    assert target in registered_prefixes()


def test_a_half_made_new_environment_is_removed_and_unregistered(tmp_path: Path) -> None:
    """Finding 8: after ENOSPC a folder without conda-meta stayed, and `create -p` refused it even with
    --force; the journal says envguard made it."""
    target = tmp_path / "half"
    (target / "lib").mkdir(parents=True)
    (target / "lib" / "libz.so").write_text("linked after the error")
    register(target)
    _journal(target, made=True, registered=False)
    with targets.hold(target) as held:
        assert held.recovered and "removed" in held.recovered[0]
    assert not target.exists() and target not in registered_prefixes()


def test_a_finished_replacement_only_loses_its_leftover_old_copy(tmp_path: Path) -> None:
    target = tmp_path / "envs" / "work"
    pid = _dead_pid()
    _env(target, "the new one, complete")
    _env(targets.aside_path(target, pid), "the old one, half deleted")
    _journal(target, pid=pid, aside=True, phase="done")
    with targets.hold(target) as held:
        assert held.recovered == []
    assert (target / "conda-meta" / "history").read_text() == "the new one, complete"
    assert sorted(p.name for p in target.parent.iterdir()) == ["work"]


@pytest.mark.parametrize("journal", [True, False])
def test_a_journal_write_killed_midway_leaves_no_temp_file(tmp_path: Path, journal: bool) -> None:
    """CI, kill -9 at 90% of a `create --force`: the process died between writing the journal's next phase
    to its temp file and renaming it over the journal, and `..work.envguard-journal.PID.RAND.tmp` stayed
    beside the environment after the next command recovered. So did one of a first journal, never
    renamed (no journal at all)."""
    target = _env(tmp_path / "envs" / "work", "the new one, complete")
    pid = _dead_pid()
    if journal:
        _journal(target, pid=pid, phase="done")
    temp = target.parent / f"..work.envguard-journal.{pid}.1a9f4845.tmp"  # atomic.write_text's name
    temp.write_text('{"phase": "do')
    live = target.parent / f"..work.envguard-journal.{os.getppid()}.2b9f4845.tmp"  # a live writer's: kept
    live.write_text("{")
    with targets.hold(target) as held:
        assert held.recovered == []
    assert sorted(p.name for p in target.parent.iterdir()) == [live.name, "work"]


def test_a_registry_write_killed_midway_leaves_no_temp_file(tmp_path: Path) -> None:
    """The same kill between the temp file and the rename of ~/.conda/environments.txt: the next
    registration, under the registry's lock, deletes the dead writer's temp file."""
    from envguard.prefix.condaconfig import environments_txt

    registry = environments_txt()
    registry.parent.mkdir(parents=True, exist_ok=True)
    temp = registry.with_name(f".environments.txt.{_dead_pid()}.3c9f4845.tmp")  # atomic.write_text's
    temp.write_text("/half/a/line")
    register(tmp_path / "work")
    assert not temp.exists() and tmp_path / "work" in registered_prefixes()


def test_a_journal_of_a_live_owner_is_left_alone_without_flock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = _env(tmp_path / "envs" / "work", "in the making")
    _journal(target, pid=os.getppid(), made=True)
    monkeypatch.setattr(targets, "_no_flock", lambda: True)  # no kernel lock to prove the owner dead
    assert targets.recover(target) is None
    assert target.exists() and targets.journal_path(target).exists()


def test_a_failed_change_puts_everything_back(tmp_path: Path) -> None:
    target = _env(tmp_path / "envs" / "work", "the original")
    register(target)
    with pytest.raises(RuntimeError), targets.hold(target) as held, targets.changing(held, replace=True):
        _env(target, "the replacement")
        raise RuntimeError("the install failed")
    assert (target / "conda-meta" / "history").read_text() == "the original"
    assert sorted(p.name for p in target.parent.iterdir()) == ["work"]
    new = tmp_path / "envs" / "new"
    with pytest.raises(RuntimeError), targets.hold(new) as held, targets.changing(held, replace=False):
        _env(new, "half")
        register(new)
        raise RuntimeError("the install failed")
    assert not new.exists() and new not in registered_prefixes()
    assert sorted(p.name for p in target.parent.iterdir()) == ["work"]
