"""Render `envguard clean`: the JSON body and rich tables grouped by category."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from envguard.clean.model import CATEGORIES, CATEGORY_TITLES, CleanPlan, Item, RunResult
from envguard.clean.run import CleanOutcome, Mode
from envguard.output import Views, command, console_text, human_bytes, text_console

SHOWN_PER_CATEGORY = 10


def to_dict(outcome: CleanOutcome) -> dict[str, Any]:
    """The JSON body: the plan (and what a clean did), or an undo's or a purge's result."""
    if outcome.plan is not None:
        return plan_to_dict(outcome.plan, outcome.mode, outcome.result)
    assert outcome.result is not None
    return {"mode": outcome.mode, "result": result_to_dict(outcome.result)}


def human(outcome: CleanOutcome, *, verbose: bool = False) -> str:
    if outcome.plan is not None:
        return render_plan(
            outcome.plan, outcome.mode, result=outcome.result, verbose=verbose, scope=outcome.scope
        )
    assert outcome.result is not None
    return render_result(outcome.result)


def views(outcome: CleanOutcome, *, verbose: bool = False) -> Views:
    return Views(lambda: to_dict(outcome), lambda: human(outcome, verbose=verbose))


def plan_to_dict(plan: CleanPlan, mode: Mode, result: RunResult | None = None) -> dict[str, Any]:
    """The JSON document for a dry run or a clean."""
    count, size, disk = plan.totals()
    data: dict[str, Any] = {
        "mode": mode,
        "caches": [_cache_dict(state) for state in plan.caches],
        "environments": [{"prefix": str(e.prefix), "origin": e.origin} for e in plan.usage.environments],
        "keep_locked": list(plan.usage.locks),
        "usage_complete": plan.usage.complete,
        "categories": {
            c: {"count": n, "bytes": b, "disk_bytes": d} for c, (n, b, d) in plan.by_category().items()
        },
        "totals": {"count": count, "bytes": size, "disk_bytes": disk},
        "items": [_item_dict(item) for item in plan.items],
        "kept": dict(sorted(plan.kept.items())),
        "problems": list(plan.problems),
        "notes": list(plan.notes),
    }
    if result is not None:
        data["result"] = result_to_dict(result)
    return data


def _cache_dict(state: Any) -> dict[str, Any]:
    cache = state.cache
    return {
        "path": str(cache.root),
        "pkgs": str(cache.pkgs),
        "kind": cache.kind,
        "origin": cache.origin,
        "index_dirs": [str(p) for p in cache.index_dirs],
        "packages": state.packages,
        "in_use": state.in_use,
        "trash": {"runs": list(state.trash_runs), "disk_bytes": state.trash_disk_bytes},
        "locked_by": [
            {"lock_file": str(h.lock_file), "convention": h.convention, "pid": h.pid, "command": h.command}
            for h in state.holders
        ],
    }


def _item_dict(item: Item) -> dict[str, Any]:
    return {
        "category": item.category,
        "cache": str(item.cache),
        "paths": [str(p) for p in item.paths],
        "dist": item.dist,
        "reason": item.reason,
        "bytes": item.bytes,
        "disk_bytes": item.disk_bytes,
        "linked_elsewhere": item.linked_elsewhere,
    }


def result_to_dict(result: RunResult) -> dict[str, Any]:
    return {
        "action": result.action,
        "run_id": result.run_id,
        "moved": [{"from": str(m.source), "to": str(m.target)} for m in result.moved],
        "removed": [str(p) for p in result.removed],
        "failed": list(result.failed),
        "skipped": list(result.skipped),
        "bytes": result.bytes,
        "disk_bytes": result.disk_bytes,
    }


def render_plan(
    plan: CleanPlan,
    mode: Mode,
    *,
    result: RunResult | None = None,
    verbose: bool = False,
    scope: tuple[str, ...] = (),
) -> str:
    """Human view: caches, a per-category summary, the items by category, what was kept, problems (or one
    line where no package cache was found). The commands it suggests repeat `scope` (CleanRequest.scope:
    the options that chose the caches and what protects their packages), so they run as printed on the
    same ones."""
    if not plan.caches and not plan.problems and result is None:
        return (
            "No package cache found (none of conda's pkgs_dirs, `conda info`'s or rattler's cache exists); "
            "nothing to clean. Point --cache at a pkgs folder to clean one elsewhere.\n"
        )
    console = text_console()
    console.print(_headline(plan, mode, result, scope))
    numbers = {state.cache.root: n for n, state in enumerate(plan.caches, start=1)}
    console.print(_caches_table(plan))
    console.print(_summary_table(plan, "What went to the trash" if mode == "clean" else "What would go"))
    for category in CATEGORIES:
        items = [i for i in plan.items if i.category == category]
        if items:
            console.print(_items_table(CATEGORY_TITLES[category], items, numbers, verbose))
    _print_footer(console, plan, result, scope)
    return console_text(console)


def _again(scope: tuple[str, ...], action: str) -> str:
    """`envguard clean` with the run's options and `action`; --undo and --purge-trash keep its caches
    only (the trash is the caches')."""
    if action != "--yes":
        scope = tuple(
            w for pair in zip(scope[::2], scope[1::2], strict=True) if pair[0] == "--cache" for w in pair
        )
    return command("envguard", "clean", *scope, action)


def _headline(plan: CleanPlan, mode: Mode, result: RunResult | None, scope: tuple[str, ...]) -> str:
    count, _size, disk = plan.totals()
    envs = len(plan.usage.environments)
    locks = f" and {len(plan.usage.locks)} lock file(s)" if plan.usage.locks else ""
    if mode == "clean" and result is not None:
        return (
            f"Moved {len(result.moved)} path(s) to the trash (run {result.run_id}); the disk gains "
            f"{human_bytes(result.disk_bytes)} once you run `{_again(scope, '--purge-trash')}` "
            f"(`{_again(scope, '--undo')}` puts them back). Usage read from {envs} environment(s){locks}."
        )
    return (
        f"Dry run: {count} item(s) would go, freeing {human_bytes(disk)} on disk. Nothing was changed; "
        f"`{_again(scope, '--yes')}` moves them to a trash folder inside each cache. "
        f"Usage read from {envs} environment(s){locks}."
    )


def _caches_table(plan: CleanPlan) -> Any:
    from rich.table import Table

    table = Table(title="Package caches", title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("Cache", overflow="fold")
    table.add_column("Kind")
    table.add_column("Found via")
    for column in ("Packages", "In use", "Trash"):
        table.add_column(column, justify="right")
    table.add_column("Lock", overflow="fold")
    for number, state in enumerate(plan.caches, start=1):
        lock = "; ".join(h.describe() for h in state.holders) or "free"
        trash = human_bytes(state.trash_disk_bytes) if state.trash_runs else "-"
        table.add_row(
            str(number),
            str(state.cache.root),
            state.cache.kind,
            state.cache.origin,
            str(state.packages),
            str(state.in_use),
            trash,
            lock,
        )
    return table


def _summary_table(plan: CleanPlan, title: str) -> Any:
    from rich.table import Table

    table = Table(title=title, title_justify="left", show_footer=True)
    count, size, disk = plan.totals()
    table.add_column("Category", footer="Total")
    table.add_column("Items", justify="right", footer=str(count))
    table.add_column("Frees on disk", justify="right", footer=human_bytes(disk))
    table.add_column("Apparent size", justify="right", footer=human_bytes(size))
    for category, (n, b, d) in plan.by_category().items():
        table.add_row(CATEGORY_TITLES[category], str(n), human_bytes(d), human_bytes(b))
    return table


def _items_table(title: str, items: Sequence[Item], numbers: dict[Path, int], verbose: bool) -> Any:
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    table.add_column("Item", overflow="fold", ratio=3)
    table.add_column("Cache #", justify="right")
    table.add_column("Frees on disk", justify="right")
    table.add_column("Why", overflow="fold", ratio=2)
    shown = items if verbose else items[:SHOWN_PER_CATEGORY]
    for item in shown:
        why = item.reason
        if item.linked_elsewhere:
            why += f"; {item.linked_elsewhere} file(s) still hardlinked elsewhere free nothing"
        table.add_row(_item_name(item), str(numbers.get(item.cache, "?")), human_bytes(item.disk_bytes), why)
    if len(items) > len(shown):
        table.add_row(f"... and {len(items) - len(shown)} more (--verbose lists all)", "", "", "")
    return table


def _item_name(item: Item) -> str:
    first = item.paths[0]
    try:
        return str(first.relative_to(item.cache))
    except ValueError:
        return str(first)


def _print_footer(console: Any, plan: CleanPlan, result: RunResult | None, scope: tuple[str, ...]) -> None:
    if plan.kept:
        kept = ", ".join(f"{n} {reason}" for reason, n in sorted(plan.kept.items()))
        console.print(f"Kept: {kept}.")
    if not plan.usage.complete:
        console.print("No package or tarball is removed: an environment's usage is unknown (see problems).")
    trash = [s for s in plan.caches if s.trash_runs]
    if trash:
        size = human_bytes(sum(s.trash_disk_bytes for s in trash))
        console.print(
            f"The trash of {len(trash)} cache(s) holds {size} from earlier runs: "
            f"`{_again(scope, '--purge-trash')}` frees it, `{_again(scope, '--undo')}` restores the last run."
        )
    for note in plan.notes:
        console.print(f"note: {note}")
    for problem in plan.problems:
        console.print(f"problem: {problem}")
    if result is not None:
        for line in (*result.failed, *result.skipped):
            console.print(f"not done: {line}")


def render_result(result: RunResult) -> str:
    """Human view of --undo and --purge-trash."""
    lines: list[str] = []
    if result.action == "undo":
        if result.run_id is None:
            lines.append("Nothing to undo: no envguard clean run is in these caches' trash.")
        else:
            lines.append(f"Restored {len(result.moved)} path(s) from run {result.run_id}.")
            lines += [f"  {m.target}" for m in result.moved]
    else:
        where = ", ".join(str(p) for p in result.removed) or "no trash folder found"
        lines.append(
            f"Emptied the trash: {human_bytes(result.disk_bytes)} freed on disk "
            f"({human_bytes(result.bytes)} apparent) from {where}."
        )
    lines += [
        f"not done: {line}" for line in (*result.failed, *result.skipped) if result.run_id or result.failed
    ]
    return "\n".join(lines) + "\n"
