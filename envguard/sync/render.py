"""Render `envguard sync`: the plan as conda and mamba users know it (package, from, to, channel; pip apart),
what was done, and the check of the result; the JSON body; with `--timings`, the time of each stage."""

from __future__ import annotations

from typing import Any, Literal

from envguard.channels import strip_credentials
from envguard.model import Manager, Package
from envguard.output import (
    NARROW,
    Row,
    Views,
    console_text,
    fitted,
    line_width,
    oneline,
    render,
    terminal_width,
    text_console,
)
from envguard.specs import version_less
from envguard.sync.fast import style_key
from envguard.sync.plan import Step, SyncPlan
from envguard.sync.run import SyncResult
from envguard.sync.timings import Timing

TITLES: dict[Manager, str] = {"conda": "conda packages", "pip": "pip packages"}
_SIGNS = {"install": "+", "remove": "-", "uninstall": "-"}


def word(step: Step) -> str:
    """What the step is called where conda's users see it: install, remove (uninstall for pip), upgrade,
    downgrade, change (same version: another build, channel or origin), reinstall."""
    old, new = step.old, step.new
    if step.action == "replace" and old is not None and new is not None and old.version != new.version:
        return "upgrade" if version_less(old.version, new.version) else "downgrade"
    return step.word


def to_dict(result: SyncResult, *, timings: bool = False) -> dict[str, Any]:
    """The JSON document: the plan's steps, what was done, and the check of the result; with `timings`, each
    stage's seconds."""
    plan = result.plan
    after = result.after
    stages = {"timings": [_timing(t) for t in result.timings]} if timings else {}
    return {
        "prefix": plan.prefix,
        "lock": plan.lock,
        "platform": plan.platform or None,
        "kind": plan.kind,
        "in_sync": result.in_sync,
        "dry_run": result.dry_run,
        "applied": result.applied,
        "declined": result.declined,
        "backend": result.backend or None,
        "steps": [_step(s) for s in plan.steps],
        "after": None
        if after is None
        else {"clean": after.clean, "drift": [f.message() for f in after.findings if not f.informational]},
        "warnings": list(result.warnings),
        **stages,
    }


def _timing(timing: Timing) -> dict[str, Any]:
    return {"stage": timing.stage, "seconds": round(timing.seconds, 4), "detail": timing.detail}


def timings_text(timings: tuple[Timing, ...]) -> str:
    """The stages as a table (Stage, Time, Detail), their sum last."""
    from rich.table import Table

    console = text_console()
    table = Table(title=None, show_edge=False, pad_edge=False, box=None, padding=(0, 2, 0, 0))
    for column in ("Stage", "Time", "Detail"):
        table.add_column(column, justify="right" if column == "Time" else "left")
    for timing in timings:
        table.add_row(timing.stage, _ms(timing.seconds), timing.detail)
    table.add_row("total", _ms(sum(t.seconds for t in timings)), "the stages above")
    console.print()
    console.print(table)
    return console_text(console)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def _step(step: Step) -> dict[str, Any]:
    return {
        "manager": step.manager,
        "action": word(step),
        "name": step.name,
        "from": _side(step.old),
        "to": _side(step.new),
    }


def _side(package: Package | None) -> dict[str, str] | None:
    if package is None:
        return None
    side = {"version": package.version}
    if package.manager == "conda":
        side.update(build=package.build, channel=strip_credentials(package.channel))
    elif package.origin is not None and package.origin.url:
        side["url"] = strip_credentials(package.origin.url)
    return side


def plan_text(plan: SyncPlan, header: bool = True) -> str:
    """The plan: a table per manager (Package, From, To, Channel), grouped by what happens to each package."""
    text = ""
    if header:
        title = f"Sync {plan.prefix} to {plan.lock}" + (f" ({plan.platform})" if plan.platform else "")
        text = fitted([("", title)], terminal_width())  # a path longer than the line folds, never cut short
    for manager in ("conda", "pip"):
        if plan.of(manager):
            text += _manager_text(plan, manager)
    return text


def _manager_text(plan: SyncPlan, manager: Manager) -> str:
    """One manager's steps as a table (Package, From, To, Channel or Source, grouped by what happens); below
    NARROW columns the channels leave the table and are listed once each under it, wrapped."""
    from rich.table import Table

    console = text_console()
    narrow = console.width < NARROW
    steps = plan.of(manager)
    where = "Channel" if manager == "conda" else "Source"
    table = Table(title=None, show_edge=False, pad_edge=False, box=None, padding=(0, 2, 0, 0))
    for column in ("", "Package", "From", "To", *(() if narrow else (where,))):
        table.add_column(column, overflow="fold")  # wrapped, never cut short with `…`
    for action in ("install", "upgrade", "downgrade", "change", "reinstall", "remove", "uninstall"):
        group = [s for s in steps if word(s) == action]
        if group:
            table.add_row("", f"{action.capitalize()}:", "", "", *(() if narrow else ("",)))
        for step in group:
            cells = [_SIGNS.get(action, "~"), step.name, _text(step.old), _text(step.new)]
            table.add_row(*cells, *(() if narrow else (_where(step),)))
    console.print(f"\n{TITLES[manager]}:")
    console.print(table)
    if not narrow:
        return console_text(console)
    names: dict[str, list[str]] = {}
    for step in steps:
        names.setdefault(_where(step), []).append(step.name)
    rows: list[Row] = [("", f"{where}:")]
    rows += [("  ", f"{', '.join(listed)}: {place}") for place, listed in names.items()]
    return console_text(console) + fitted(rows, console.width)


def _text(package: Package | None) -> str:
    if package is None:
        return "—"
    if package.manager == "conda":
        return f"{package.version} {package.build}".strip()
    editable = " (editable)" if package.origin is not None and package.origin.editable else ""
    return package.version + editable


def _where(step: Step) -> str:
    package = step.new or step.old
    if package is None:
        return ""
    if package.manager == "conda":
        return strip_credentials(package.channel)
    origin = package.origin
    return strip_credentials(origin.url) if origin is not None and origin.url else "index"


def human(
    result: SyncResult,
    *,
    shown: bool = False,
    timings: bool = False,
    width: int | Literal["terminal"] | None = "terminal",
) -> str:
    """The plan (unless `shown` already, at the prompt), then what happened and the verdict, its lines wrapped
    at `width` (default envguard.terminal.line_width: None, whole lines, into a pipe); with `timings`, the
    table of stages."""
    text = _human(result, shown=shown, width=width)
    return text + timings_text(result.timings) if timings else text


def _human(result: SyncResult, *, shown: bool, width: int | Literal["terminal"] | None) -> str:
    plan = result.plan
    columns = line_width() if width == "terminal" else width
    if plan.empty:
        return fitted([("", f"OK: {plan.prefix} already matches {plan.lock}; nothing to do")], columns)
    text = "" if shown else plan_text(plan)
    counts = ", ".join(f"{len(plan.of(m))} {m}" for m in ("conda", "pip") if plan.of(m))
    if result.dry_run:
        return text + f"\nDry run: {counts} change(s) planned; nothing was changed.\n"
    if result.declined:
        return text + "\nDeclined: nothing was changed.\n"
    after = result.after
    if after is not None and not after.clean:
        rows: list[Row] = [("", f"DRIFT after sync ({counts} change(s) applied); check still finds:")]
        rows += [("  ", oneline(f.message())) for f in after.findings if not f.informational]
        return text + "\n" + fitted(rows, columns)
    synced = f"Synced: {plan.prefix} matches {plan.lock} ({counts} change(s); {result.backend})"
    return text + "\n" + fitted([("", synced)], columns)


def views(result: SyncResult, *, shown: bool = False, timings: bool = False) -> Views:
    return Views(
        lambda: to_dict(result, timings=timings), lambda: human(result, shown=shown, timings=timings)
    )


def in_sync_answers(plan: SyncPlan) -> dict[str, str]:
    """Every answer an environment in sync with the lock gets (human and JSON, with and without --dry-run),
    by envguard.sync.fast's key: stored for the next sync of it (the human one whole, and as wrapped at this
    terminal's width under `KEY@WIDTH` where that differs: envguard.check.fast picks the one that fits)."""
    answers = {}
    width = line_width()
    for dry_run in (False, True):
        result = SyncResult(plan, dry_run=dry_run)
        answers[style_key("json", dry_run)] = render(views(result), "json")
        answers[style_key("human", dry_run)] = whole = human(result, width=None)
        wrapped = whole if width is None else human(result, width=width)
        if wrapped != whole:
            answers[f"{style_key('human', dry_run)}@{width}"] = wrapped
    return answers
