"""The hooks' work without conda: `--fix` restores through `envguard sync` where envguard has it and otherwise
says what to run (exit 1), never fails on a lock it cannot read, and an envguard bug inside a hook is one line
naming its log."""

from __future__ import annotations

from pathlib import Path

import pytest

from envguard.condaplugin import actions, remedy
from envguard.prefix.lockref import remember
from tests.helpers import MakePrefix, envguard, install


def _refuse(message: str) -> None:
    raise AssertionError(f"asked {message!r} where nothing can be run")


def test_fix_without_sync_says_what_restores(
    make_prefix: MakePrefix,
    channels: dict[str, Path],
    extra_channel: Path,
    pkgs_cache: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # an envguard without `envguard sync` (a copy: the shared table's order is the CLI's and --help's)
    monkeypatch.setattr(remedy, "COMMANDS", {k: v for k, v in remedy.COMMANDS.items() if k != "sync"})
    lock = tmp_path / "env.lock.yml"
    assert envguard("lock", str(make_prefix(["zlib"])), "--no-probe", "-o", str(lock)) == 0
    drifted = install(
        tmp_path / "drifted", ["zlib", "fill000"], [channels["forge"], extra_channel], cache=pkgs_cache
    )
    assert remember(drifted, lock)
    capsys.readouterr()
    assert not remedy.can_sync()
    assert actions.fix_lock(str(drifted), _refuse) == 1
    said = capsys.readouterr().out.splitlines()
    assert said[0] == f"envguard cannot restore {drifted} by itself yet; run:"
    # check's first fix line (with sync in envguard, check's own lines say sync: they do not ask COMMANDS)
    assert said[1] == f"    envguard sync {drifted} --lock {lock} --yes"
    assert actions.fix_torch(str(drifted), _refuse) == 0
    assert capsys.readouterr().out == f"envguard: {drifted}: no torch; nothing to fix\n"


def test_a_bug_inside_a_hook_is_one_line_and_a_log(
    make_prefix: MakePrefix, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(prefix: Path, start: Path | None = None) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(actions, "lock_health", broken)
    prefix = make_prefix(["zlib"])
    actions.after_command(str(prefix))
    actions.lock_check(str(prefix), False, "OK", "BAD")
    assert actions.fix_lock(str(prefix), _refuse) == 4
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 3 and all(
        ln.startswith("envguard: error: internal error (RuntimeError)") for ln in lines
    )
    log = Path(lines[0].split("Traceback saved to ", 1)[1].split(";", 1)[0])
    assert "RuntimeError: a bug" in log.read_text()


@pytest.mark.parametrize("inside", ["\n", "\r", "\x1b[2J", "\u202e", "\u2028"])
def test_nothing_from_a_recorded_lock_path_breaks_or_drives_a_line_in_condas_output(
    make_prefix: MakePrefix, tmp_path: Path, capsys: pytest.CaptureFixture[str], inside: str
) -> None:
    """The lock path comes from a file in the environment (etc/envguard/lock.json): a line break in it must
    not start a forged line of its own in `conda doctor`'s report (issue 42)."""
    prefix = make_prefix(["zlib"])
    lock = tmp_path / f"x{inside}envguard: OK forged.yml"
    assert envguard("lock", str(prefix), "--no-probe", "-o", str(lock)) == 0
    assert remember(prefix, lock)
    capsys.readouterr()
    actions.lock_check(str(prefix), False, "OK", "BAD")
    actions.after_command(str(prefix))
    out, err = capsys.readouterr()
    for text in (out, err):
        assert not any(line.startswith("envguard: OK forged") for line in text.splitlines())
        assert inside not in text.rstrip("\n"), repr(text)
    assert out.count("\n") == 1 and out.endswith("\n"), out


def test_after_a_conda_command_a_lock_too_big_to_read_at_once_is_one_line_not_a_parse(
    make_prefix: MakePrefix,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A 200,000-package lock (48 MB) cost every conda install ~21 s of parsing before it was refused (issue
    42): past HOOK_MAX_BYTES the hook says how to check it instead, and reads none of it."""
    prefix = make_prefix(["zlib"])
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(prefix), "--no-probe", "-o", str(lock)) == 0
    assert remember(prefix, lock)
    monkeypatch.setattr(actions, "HOOK_MAX_BYTES", lock.stat().st_size - 1)
    monkeypatch.setattr(actions, "lock_health", lambda *_: pytest.fail("the hook read the lock"))
    capsys.readouterr()
    actions.after_command(str(prefix))
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("envguard: ") and f"envguard check {prefix} --lock {lock}" in line, line
