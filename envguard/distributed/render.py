"""Render the distributed check: the JSON body, a table of ranks with the verdicts, and Markdown."""

from __future__ import annotations

import dataclasses
from typing import Any

from envguard.distributed.records import RankReport, to_wire
from envguard.distributed.result import DistributedResult
from envguard.findings import markdown as findings_markdown
from envguard.findings import table as findings_table
from envguard.findings import verdict_line
from envguard.output import Views, console_text, text_console

WIDTH = 130


def to_dict(result: DistributedResult) -> dict[str, Any]:
    """The JSON body: each rank without its package list and shard indices, each epoch's shard check."""
    shards = []
    for check in result.shards:
        shards.append({**dataclasses.asdict(check), "partition": check.partition})
    return {
        "rank": result.rank,
        "world_size": result.world_size,
        "ranks": [
            {k: v for k, v in to_wire(r).items() if k not in ("packages", "shards")} for r in result.ranks
        ],
        "shards": shards,
        "findings": [dataclasses.asdict(f) for f in result.findings],
    }


def human(result: DistributedResult, what: str = "distributed check") -> str:
    from rich.table import Table

    console = text_console(WIDTH)
    ranks = Table(title=f"{result.world_size} ranks", title_justify="left")
    for name in ("rank", "host", "environment", "env sha256", "torch", "python", "samples"):
        ranks.add_column(name, overflow="fold")
    for r in result.ranks:
        measured = (r.prefix, r.env_sha256[:12], str(r.dataset_size)) if isinstance(r, RankReport) else None
        prefix, digest, samples = measured or ("-", "-", "-")
        ranks.add_row(str(r.rank), r.host, prefix, digest, r.torch, r.python, samples)
    console.print(ranks)
    console.print(findings_table(result.findings, "Verdicts"))
    console.print(verdict_line(result.findings, what), markup=False)
    return console_text(console)


def markdown(result: DistributedResult) -> str:
    return findings_markdown(result.findings)


def views(result: DistributedResult, what: str = "distributed check") -> Views:
    """`what` names the command in the verdict line (`smoke --distributed`, `check --distributed`)."""
    return Views(lambda: to_dict(result), lambda: human(result, what), lambda: markdown(result))
