"""The exchange, inside the gloo process group (touches the network): one all-gather of every rank's summary
(digests and counts, a few hundred bytes, in a fixed SLOT); then only the ranks `detail_senders` names send
rank 0 their package list, one message each (its length is in their summary). The wire cost per rank is the
summary, not the environment: a package list crosses only from a rank whose environment differs from the
majority's (and from one rank of the majority, for reference).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from envguard.distributed.measure import Measured
from envguard.distributed.records import (
    EnvDetail,
    Rank,
    RankReport,
    detail_from_wire,
    encode,
    from_wire,
    to_wire,
)
from envguard.distributed.verdicts import detail_senders
from envguard.errors import OperationalError, first_line

_T = TypeVar("_T")

SLOT = 1024  # bytes per rank in the summaries' all-gather; a longer summary costs a second round for all
HEADER = 4  # the payload's length, little-endian, at the head of its slot
OVERFLOW = 0xFFFFFFFF


@dataclass(frozen=True, slots=True)
class Exchanged:
    """What this rank knows after the exchange; `details` is empty except on rank 0."""

    reports: tuple[Rank, ...]
    details: dict[int, EnvDetail]
    summary_bytes: int  # the all-gather slot each rank sends
    detail_ranks: tuple[int, ...]
    detail_bytes: int  # received (rank 0) or sent (a sender)


def all_gather_bytes(payload: bytes, world: int, slot: int = SLOT) -> list[bytes]:
    """Every rank's `payload`, by rank: one all-gather of fixed slots; when any payload does not fit, every
    rank sees its overflow mark and all run a second round sized to the longest."""
    import torch
    import torch.distributed as dist

    fits = len(payload) + HEADER <= slot
    mine = torch.zeros(slot, dtype=torch.uint8)
    head = (len(payload) if fits else OVERFLOW).to_bytes(HEADER, "little")
    mine[: HEADER + (len(payload) if fits else 0)] = torch.frombuffer(
        bytearray(head + (payload if fits else b"")), dtype=torch.uint8
    )
    slots = [torch.empty(slot, dtype=torch.uint8) for _ in range(world)]
    dist.all_gather(slots, mine)
    raw = [s.numpy().tobytes() for s in slots]
    lengths = [int.from_bytes(r[:HEADER], "little") for r in raw]
    if OVERFLOW not in lengths:
        return [r[HEADER : HEADER + n] for r, n in zip(raw, lengths, strict=True)]
    sizes = [torch.zeros(1, dtype=torch.int64) for _ in range(world)]
    dist.all_gather(sizes, torch.tensor([len(payload)], dtype=torch.int64))
    longest = max(int(size.item()) for size in sizes)
    return all_gather_bytes(payload, world, longest + HEADER)


def _details(reports: Sequence[Rank], rank: int, mine: bytes) -> tuple[dict[int, EnvDetail], int]:
    """Rank 0 receives the package list of each rank `detail_senders` names, one message each, point to
    point; a sender sends its own; every other rank is done."""
    import torch
    import torch.distributed as dist

    senders = detail_senders(reports)
    if rank == 0:
        lengths = {r.rank: r.package_list_bytes for r in reports if isinstance(r, RankReport)}
        found = {0: _read(detail_from_wire, mine, 0)} if 0 in senders else {}
        for sender in (s for s in senders if s != 0):
            data = torch.empty(lengths[sender], dtype=torch.uint8)
            dist.recv(data, src=sender)
            found[sender] = _read(detail_from_wire, data.numpy().tobytes(), sender)
        return found, sum(lengths[s] for s in senders if s != 0)
    if rank in senders:
        dist.send(torch.frombuffer(bytearray(mine), dtype=torch.uint8), dst=0)
        return {}, len(mine)
    return {}, 0


def _read(decode: Callable[[Any], _T], data: bytes, sender: int) -> _T:
    """What rank `sender` sent, decoded; anything else (bad JSON, a wrong type: another envguard, or no
    envguard on that port) is one line on every rank, exit 3."""
    try:
        return decode(json.loads(data))
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise OperationalError(
            f"rank {sender} sent a summary this envguard cannot read ({first_line(exc)}); run the same "
            "envguard version on every rank"
        ) from exc


def consensus(measured: Measured, rank: int, world: int) -> Exchanged:
    """Run the exchange (call on every rank, inside the process group)."""
    summaries = all_gather_bytes(encode(to_wire(measured.report)), world)
    reports = tuple(_read(from_wire, summary, sender) for sender, summary in enumerate(summaries))
    details, detail_bytes = _details(reports, rank, measured.detail)
    return Exchanged(
        reports=reports,
        details=details,
        summary_bytes=max(SLOT, max(len(summary) + HEADER for summary in summaries)),
        detail_ranks=detail_senders(reports),
        detail_bytes=detail_bytes,
    )
