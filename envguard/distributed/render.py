"""Render the distributed check: the JSON body, a table of the ranks (alike ranks on one row) with the
verdicts, and Markdown."""

from __future__ import annotations

import dataclasses
from typing import Any

from envguard.distributed.records import Rank, RankReport, to_wire
from envguard.distributed.result import DistributedResult, Wire
from envguard.distributed.verdicts import groups, spans
from envguard.findings import markdown as findings_markdown
from envguard.findings import table as findings_table
from envguard.findings import verdict_line
from envguard.output import Views, console_text, text_console

WIDTH = 130
HOSTS_SHOWN = 4


def to_dict(result: DistributedResult) -> dict[str, Any]:
    """The JSON body: every rank's summary, each epoch's shard check, the findings, what crossed the wire."""
    wire = result.wire
    return {
        "rank": result.rank,
        "world_size": result.world_size,
        "launcher": wire.launcher if wire else None,
        "rendezvous": wire.rendezvous if wire else None,
        "ranks": [to_wire(r) for r in result.ranks],
        "shards": [{**dataclasses.asdict(check), "partition": check.partition} for check in result.shards],
        "findings": [dataclasses.asdict(f) for f in result.findings],
        "wire": None if wire is None else _wire_dict(wire),
    }


def _wire_dict(wire: Wire) -> dict[str, Any]:
    return {
        "summary_bytes": wire.summary_bytes,
        "detail_ranks": list(wire.detail_ranks),
        "detail_bytes": wire.detail_bytes,
    }


def _row(rank: Rank) -> tuple[str, str, str, str, str]:
    """What a table row shows of a rank besides its number and host (alike ranks share a row)."""
    if isinstance(rank, RankReport):
        return rank.prefix, rank.env_sha256[:12], rank.torch, rank.python, str(rank.dataset_size)
    return "-", "-", rank.torch, rank.python, "-"


def _size(count: int) -> str:
    return f"{count} B" if count < 10_000 else f"{count / 1024:.0f} KiB"


def wire_line(wire: Wire, world: int) -> str:
    """How the ranks met and what crossed, in one line."""
    senders = wire.detail_ranks
    details = "no package list"
    if senders:
        which = f"rank {senders[0]}" if len(senders) == 1 else f"ranks {spans(senders)}"
        details = f"package lists from {which} ({_size(wire.detail_bytes)})"
    return (
        f"{world} ranks via {wire.launcher}, rendezvous {wire.rendezvous}; summaries "
        f"{_size(wire.summary_bytes)} per rank, {details}"
    )


def human(result: DistributedResult, what: str = "distributed check") -> str:
    from rich.table import Table

    console = text_console(WIDTH)
    ranks = Table(title=f"{result.world_size} ranks", title_justify="left")
    for name in ("ranks", "hosts", "environment", "env sha256", "torch", "python", "samples"):
        ranks.add_column(name, overflow="fold")
    for group in sorted(groups(list(result.ranks), _row), key=lambda g: g[0].rank):
        hosts = list(dict.fromkeys(r.host for r in group))
        shown = ", ".join(hosts[:HOSTS_SHOWN]) + (
            f" +{len(hosts) - HOSTS_SHOWN}" if len(hosts) > HOSTS_SHOWN else ""
        )
        ranks.add_row(spans([r.rank for r in group]), shown, *_row(group[0]))
    console.print(ranks)
    if result.wire is not None:
        console.print(
            wire_line(result.wire, result.world_size), markup=False, highlight=False, soft_wrap=True
        )
    console.print(findings_table(result.findings, "Verdicts", WIDTH))
    console.print(verdict_line(result.findings, what), markup=False)
    return console_text(console)


def markdown(result: DistributedResult) -> str:
    return findings_markdown(result.findings)


def views(result: DistributedResult, what: str = "distributed check") -> Views:
    """`what` names the command in the verdict line (`smoke --distributed`, `check --distributed`)."""
    return Views(lambda: to_dict(result), lambda: human(result, what), lambda: markdown(result))
