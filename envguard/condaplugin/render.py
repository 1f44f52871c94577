"""How the conda plugin's answers read inside conda's output (plain text, conda's own marks given by the
caller): `conda doctor`'s report lines, the one line after `conda install/update/remove`, and what a fix
says."""

from __future__ import annotations

from envguard.check.report import severity
from envguard.condaplugin.health import LockHealth, TorchHealth
from envguard.condaplugin.remedy import accept_command, can_sync, restore_command
from envguard.diff.changes import Difference

SHOWN = 10  # findings listed under a failing check (conda doctor --verbose lists all)
NAMED = 5  # packages named in the one-line warning


def lock_lines(health: LockHealth, ok: str, bad: str, *, verbose: bool = False) -> list[str]:
    """`conda doctor`'s lines for the lock check: a verdict line with conda's mark, then what differs."""
    where = health.prefix
    if health.state == "no-lock":
        return [
            f"{ok} envguard: no lock known for {where} (none recorded in it; for the active environment, "
            "no conda-lock.yml or [tool.envguard] lock from this folder up); nothing to check. "
            f"`envguard lock {where} -o conda-lock.yml` makes one"
        ]
    if health.state == "unreadable":
        return [f"{bad} envguard: cannot check {where} against its lock: {health.problem}"]
    assert health.followed is not None
    lock = f"{health.followed.lock} ({_how(health)})"
    if health.state == "clean":
        return [f"{ok} envguard: {where} matches its lock {lock}"]
    drift = _drift(health)
    lines = [f"{bad} envguard: {where} differs from its lock {lock}: {len(drift)} difference(s)"]
    shown = drift if verbose else drift[:SHOWN]
    lines += [f"    {d.message()}" for d in shown]
    if len(shown) < len(drift):
        lines.append(f"    ... and {len(drift) - len(shown)} more (conda doctor --verbose lists them)")
    lines += _remedies(health)
    return lines


def torch_lines(health: TorchHealth, ok: str, bad: str) -> list[str]:
    """`conda doctor`'s lines for the torch-family check."""
    if health.problem:
        return [f"{bad} envguard: cannot read {health.prefix}: {health.problem}"]
    if not health.members:
        return [f"{ok} envguard: no torch in {health.prefix}; nothing to check"]
    names = ", ".join(m.label() for m in health.members)
    if not health.problems:
        build = health.members[0].build
        if len(health.members) == 1:
            return [f"{ok} envguard: {names} ({build}); no torchvision or torchaudio beside it"]
        return [f"{ok} envguard: {names}: one release, one build ({build})"]
    lines = [f"{bad} envguard: {names} do not belong together:"]
    lines += [f"    {problem}" for problem in health.problems]
    lines.append(
        "    fix: install the torchvision/torchaudio of torch's release from the index torch came from, or "
        "`conda doctor --fix envguard-torch-family` to restore the lock"
    )
    return lines


def left_its_lock(health: LockHealth) -> str | None:
    """The one line after `conda install/update/remove`: None while the environment matches its lock (or
    follows none); a lock it cannot read is one line too."""
    if health.state == "unreadable":
        return f"envguard: cannot check {health.prefix} against its lock: {health.problem}"
    if health.state != "drift":
        return None
    restore, accept = restore_command(health), accept_command(health)
    ways = [f"'{restore}' restores it" if restore else "", f"'{accept}' accepts it" if accept else ""]
    advice = ", ".join(w for w in ways if w)
    return f"envguard: {health.prefix} left its lock: {summary(_drift(health))}" + (
        f"; {advice}" if advice else ""
    )


def summary(drift: list[Difference]) -> str:
    """`+fill000, -six, numpy 1.26.4->2.0.1`: installed, gone, changed (pip packages marked), the first
    NAMED."""
    words = [_word(d) for d in drift[:NAMED]]
    if len(drift) > NAMED:
        words.append(f"and {len(drift) - NAMED} more")
    return ", ".join(words)


def what_to_run(health: LockHealth) -> list[str]:
    """A fix that cannot run itself (no `envguard sync` here): the commands that restore, as printed."""
    fixes = health.report.fixes if health.report is not None else ()
    if not fixes:
        return [f"envguard cannot restore {health.prefix} by itself; run `envguard check {health.prefix}`"]
    return [f"envguard cannot restore {health.prefix} by itself yet; run:", *(f"    {c}" for c in fixes)]


def _word(d: Difference) -> str:
    pip = " (pip)" if d.category == "pip" else ""
    if d.kind == "only-b":
        return f"+{d.name}{pip}"
    if d.kind == "only-a":
        return f"-{d.name}{pip}"
    if d.kind == "changed" and d.values:
        _field, before, after = d.values[0]
        return f"{d.name}{pip} {before}->{after}"
    return f"{d.name or d.category}{pip}"


def _drift(health: LockHealth) -> list[Difference]:
    report = health.report
    return [d for d in report.findings if severity(d) == "drift"] if report is not None else []


def _how(health: LockHealth) -> str:
    assert health.followed is not None
    if health.followed.how == "project":
        return "the project's"
    return "recorded by envguard" + (", edited since" if health.followed.edited else "")


def _remedies(health: LockHealth) -> list[str]:
    restore, accept = restore_command(health), accept_command(health)
    lines = []
    if restore:
        by_conda = "  (or: conda doctor --fix envguard-lock)" if can_sync() else ""
        lines.append(f"    restore: {restore}{by_conda}")
    if accept:
        lines.append(f"    accept:  {accept}")
    return lines
