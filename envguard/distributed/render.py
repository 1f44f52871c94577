"""Render the distributed check: JSON, a table of ranks, the shard checks and the findings."""

from __future__ import annotations

import dataclasses
import io
from typing import Any

from envguard.distributed.result import DistributedResult
from envguard.findings import table as findings_table
from envguard.findings import verdict_line


def to_dict(result: DistributedResult) -> dict[str, Any]:
    ordered: dict[str, Any] = dataclasses.asdict(result)
    for shard, check in zip(ordered["shards"], result.shards, strict=True):
        shard["partition"] = check.partition
    return ordered


def render(result: DistributedResult, what: str = "distributed check") -> str:
    from rich.console import Console
    from rich.table import Table

    console = Console(file=io.StringIO(), width=130, highlight=False, soft_wrap=False)
    ranks = Table(title=f"{result.world_size} ranks", title_justify="left")
    for name in ("rank", "host", "environment", "env sha256", "torch", "python", "samples"):
        ranks.add_column(name, overflow="fold")
    for r in result.ranks:
        ranks.add_row(
            str(r["rank"]),
            str(r["host"]),
            str(r.get("prefix", "-")),
            str(r.get("env_sha256", "-"))[:12],
            str(r.get("torch")),
            str(r.get("python")),
            str(r.get("dataset_size", "-")),
        )
    console.print(ranks)
    console.print(findings_table(result.findings, "Verdicts"))
    console.print(verdict_line(result.findings, what), markup=False)
    output: str = console.file.getvalue()  # type: ignore[attr-defined]
    return output
