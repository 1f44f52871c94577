"""The exchange, inside the gloo process group (touches the network): every rank all-gathers every rank's
summary (digests and counts: a few hundred bytes each); when the shards are comparable, one all-reduce sums
the ranks' tallies of the dataset's indices; then only the ranks `detail_senders` names send rank 0 their
package list. The wire cost per rank is the summary, not the environment: a 300-package list crosses only
from a rank whose environment differs from the majority's (and from one rank of the majority, for reference).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from envguard.distributed.measure import Measured
from envguard.distributed.records import (
    Coverage,
    EnvDetail,
    Rank,
    RankReport,
    coverage,
    detail_from_wire,
    detail_to_wire,
    from_wire,
    tally,
    to_wire,
)
from envguard.distributed.verdicts import detail_senders, shards_comparable


@dataclass(frozen=True, slots=True)
class Exchanged:
    """What this rank knows after the exchange; `details` is empty except on rank 0."""

    reports: tuple[Rank, ...]
    details: dict[int, EnvDetail]
    coverage: tuple[Coverage, ...]
    summary_bytes: int  # the all-gather slot: the longest summary
    detail_ranks: tuple[int, ...]
    detail_bytes: int  # received (rank 0) or sent (a sender)
    coverage_bytes: int


def encode(data: Any) -> bytes:
    return json.dumps(data, separators=(",", ":"), sort_keys=True).encode()


def all_gather_bytes(payload: bytes, world: int) -> list[bytes]:
    """Every rank's `payload`, by rank: the lengths first, then one slot of the longest length each."""
    import torch
    import torch.distributed as dist

    lengths = [torch.zeros(1, dtype=torch.int64) for _ in range(world)]
    dist.all_gather(lengths, torch.tensor([len(payload)], dtype=torch.int64))
    longest = max(int(length.item()) for length in lengths)
    mine = torch.zeros(longest, dtype=torch.uint8)
    if payload:
        mine[: len(payload)] = torch.frombuffer(bytearray(payload), dtype=torch.uint8)
    slots = [torch.empty(longest, dtype=torch.uint8) for _ in range(world)]
    dist.all_gather(slots, mine)
    return [slot.numpy().tobytes()[: int(n.item())] for slot, n in zip(slots, lengths, strict=True)]


def _coverage(reports: Sequence[Rank], indices: Sequence[Sequence[int]]) -> tuple[tuple[Coverage, ...], int]:
    """Every epoch's coverage (this rank's tallies, summed over the ranks in one all-reduce), and the bytes
    this rank put in."""
    import torch
    import torch.distributed as dist

    size = next(r.dataset_size for r in reports if isinstance(r, RankReport))
    counts = torch.tensor([tally(epoch, size) for epoch in indices], dtype=torch.int32).reshape(
        len(indices), size + 1
    )
    dist.all_reduce(counts)
    found = tuple(coverage(epoch, row) for epoch, row in enumerate(counts.tolist()))
    return found, counts.numel() * counts.element_size()


def _details(senders: Sequence[int], rank: int, mine: EnvDetail | None) -> tuple[dict[int, EnvDetail], int]:
    """Rank 0 receives the package list of each sender (point to point); a sender sends its own."""
    import torch
    import torch.distributed as dist

    if rank == 0:
        found = {0: mine} if 0 in senders and mine is not None else {}
        received = 0
        for sender in (s for s in senders if s != 0):
            length = torch.zeros(1, dtype=torch.int64)
            dist.recv(length, src=sender)
            data = torch.empty(int(length.item()), dtype=torch.uint8)
            dist.recv(data, src=sender)
            received += int(length.item())
            detail = json.loads(data.numpy().tobytes())
            if detail is not None:
                found[sender] = detail_from_wire(detail)
        return found, received
    if rank not in senders:
        return {}, 0
    payload = encode(None if mine is None else detail_to_wire(mine))
    dist.send(torch.tensor([len(payload)], dtype=torch.int64), dst=0)
    dist.send(torch.frombuffer(bytearray(payload), dtype=torch.uint8), dst=0)
    return {}, len(payload)


def consensus(measured: Measured, rank: int, world: int) -> Exchanged:
    """Run the exchange (call on every rank, inside the process group)."""
    summaries = all_gather_bytes(encode(to_wire(measured.report)), world)
    reports = tuple(from_wire(json.loads(summary)) for summary in summaries)
    found: tuple[Coverage, ...] = ()
    coverage_bytes = 0
    if shards_comparable(reports) and measured.indices:
        found, coverage_bytes = _coverage(reports, measured.indices)
    senders = detail_senders(reports)
    details, detail_bytes = _details(senders, rank, measured.detail)
    return Exchanged(
        reports=reports,
        details=details,
        coverage=found,
        summary_bytes=max(len(summary) for summary in summaries),
        detail_ranks=senders,
        detail_bytes=detail_bytes,
        coverage_bytes=coverage_bytes,
    )
