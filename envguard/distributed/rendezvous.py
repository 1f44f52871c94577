"""Where the ranks meet before anything crosses between them: a TCP store served by rank 0 (by torchrun's
agent under torchrun), in which each rank marks that it joined and that it measured, so that a rank that died
or hung is named within the timeout instead of waited on; then the gloo process group the exchange runs in.

Stages, each a key per rank: `joined/R` (holding R's host) as soon as R reaches the store, `measured/R` when
R's report is ready — every rank waits there for all the others, at most the timeout, and names the missing
ones from what the store holds: joined but never measured (died or hung while measuring), or never joined
(died, never started, or cannot reach rank 0's host) — and `done/R` after the exchange, which rank 0 waits for
before its store goes away with it.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from envguard.channels import scrub
from envguard.distributed.launcher import Launch
from envguard.distributed.verdicts import spans
from envguard.errors import EXIT_OPERATIONAL, OperationalError, first_line
from envguard.textio import visible

JOINED, MEASURED, DONE = "joined", "measured", "done"
NAMED = 16  # missing ranks named in the line (the count says how many in all)
DONE_GRACE_S = 30.0  # how long rank 0 keeps its store up for ranks still finishing the exchange


def find_missing(present: Callable[[int, int], bool], lo: int, hi: int, limit: int) -> list[int]:
    """Up to `limit` ranks in [lo, hi) that did not mark a stage, lowest first, found by halving:
    `present(lo, hi)` says whether every rank in [lo, hi) did (one store request). A dead rank among 8,000
    costs each asking rank ~26 requests instead of 8,000."""
    if hi <= lo or limit <= 0 or present(lo, hi):
        return []
    if hi - lo == 1:
        return [lo]
    middle = (lo + hi) // 2
    left = find_missing(present, lo, middle, limit)
    return left + find_missing(present, middle, hi, limit - len(left))


def absent(
    missing: Sequence[int], count: int, joined: Mapping[int, str], timeout_s: float, launch: Launch
) -> str:
    """One line naming the ranks that did not report (`missing`: the first of `count`): those that joined
    (with their host) and stopped, and those that never reached the rendezvous."""
    stopped = [rank for rank in missing if rank in joined]
    never = [rank for rank in missing if rank not in joined]
    parts: list[str] = []
    if stopped:
        hosts = ", ".join(dict.fromkeys(joined[rank] for rank in stopped))
        parts.append(f"{_ranks(stopped)} on {hosts} joined, then stopped (died or hung while measuring)")
    if never:
        parts.append(
            f"{_ranks(never)} never reached the rendezvous at {launch.rendezvous} ({launch.origin}): died, "
            "never started, or cannot reach that host"
        )
    named = f" (the first {len(missing)} named)" if count > len(missing) else ""
    return (
        f"{count} of {launch.world_size} ranks did not report within {timeout_s:g} s{named}: "
        f"{'; '.join(parts)}; the rank's own output says why"
    )


def _ranks(ranks: Sequence[int]) -> str:
    return f"rank {ranks[0]}" if len(ranks) == 1 else f"ranks {spans(ranks)}"


class Rendezvous:
    """One rank's handle on the store: mark a stage, wait for every rank at one, name the ranks that never
    came."""

    def __init__(self, launch: Launch, timeout_s: float, store: Any) -> None:
        self.launch, self.timeout_s, self.store = launch, timeout_s, store

    def mark(self, stage: str, value: str = "") -> None:
        try:
            self.store.set(f"{stage}/{self.launch.rank}", value)
            self.store.add(f"{stage}#", 1)
        except RuntimeError as exc:
            raise self._lost(exc) from exc

    def wait(self, stage: str) -> None:
        """Until every rank marked `stage`; after the timeout, OperationalError naming those that did not."""
        keys = [f"{stage}/{rank}" for rank in range(self.launch.world_size)]
        try:
            self.store.wait(keys, timedelta(seconds=self.timeout_s))
            return
        except RuntimeError as exc:
            waited = exc
        try:  # every waiting rank asks at once: a count, then halving, not a request per rank
            count = self.launch.world_size - int(self.store.add(f"{stage}#", 0))
            missing = find_missing(lambda lo, hi: bool(self.store.check(keys[lo:hi])), 0, len(keys), NAMED)
            joined = {
                rank: self.store.get(f"{JOINED}/{rank}").decode(errors="replace")
                for rank in missing
                if self.store.check([f"{JOINED}/{rank}"])
            }
        except RuntimeError as exc:
            raise self._lost(exc) from exc
        if not missing:
            raise OperationalError(f"waiting for the other ranks failed: {first_line(waited)}") from waited
        raise OperationalError(
            absent(missing, max(count, len(missing)), joined, self.timeout_s, self.launch)
        ) from waited

    def finish(self) -> None:
        """After the exchange: mark done; rank 0, whose process serves the store, waits (briefly) for every
        rank to be done with it. Nothing here can fail the check any more."""
        try:
            self.store.set(f"{DONE}/{self.launch.rank}", "")
            if self.launch.rank == 0 and not self.launch.agent_store:
                keys = [f"{DONE}/{rank}" for rank in range(self.launch.world_size)]
                self.store.wait(keys, timedelta(seconds=min(self.timeout_s, DONE_GRACE_S)))
        except RuntimeError:
            pass

    def _lost(self, exc: BaseException) -> OperationalError:
        return OperationalError(
            f"rank {self.launch.rank} lost the rendezvous at {self.launch.rendezvous} (rank 0's store): "
            f"rank 0 died or exited ({first_line(exc)}); rank 0's own output says why"
        )


def connect(launch: Launch, timeout_s: float) -> Rendezvous:
    """Reach the store (rank 0 serves it unless torchrun's agent does) and mark this rank joined."""
    from torch.distributed import PrefixStore, TCPStore  # type: ignore[attr-defined]

    serves = launch.rank == 0 and not launch.agent_store
    # TCPStore's handshake waits without a deadline on a port that accepts but never answers (another
    # program on MASTER_PORT): past the timeout, one line and exit 3 from a watchdog thread
    watchdog = threading.Timer(
        timeout_s + WATCHDOG_GRACE_S,
        _give_up,
        args=(
            f"rank {launch.rank} could not reach the rendezvous at {launch.rendezvous} ({launch.origin}) "
            f"within {timeout_s:g} s: rank 0 died, never started, or runs on another host (set MASTER_ADDR "
            "to its host), or another program listens on that port (set MASTER_PORT to the port rank 0 "
            "serves)",
        ),
    )
    watchdog.daemon = True
    watchdog.start()
    try:
        store = TCPStore(
            launch.host,
            launch.port,
            world_size=launch.world_size,
            is_master=serves,
            timeout=timedelta(seconds=timeout_s),
            wait_for_workers=False,
            multi_tenant=True,
        )
    except RuntimeError as exc:
        if serves:
            raise OperationalError(
                f"rank 0 could not serve the rendezvous on port {launch.port} ({launch.origin}): "
                f"{first_line(exc)}; set MASTER_PORT to a free port for every rank"
            ) from exc
        raise OperationalError(
            f"rank {launch.rank} could not reach the rendezvous at {launch.rendezvous} ({launch.origin}) "
            f"within {timeout_s:g} s: rank 0 died, never started, or runs on another host (set MASTER_ADDR "
            f"to its host) ({first_line(exc)})"
        ) from exc
    finally:
        watchdog.cancel()
    meeting = Rendezvous(launch, timeout_s, PrefixStore(f"envguard/{launch.attempt}", store))
    meeting.mark(JOINED, socket.gethostname())
    return meeting


WATCHDOG_GRACE_S = 4.0  # after TCPStore's own connect timeout, which answers first when it can


def _give_up(message: str) -> None:
    """The watchdog's end: the one error line, exit 3 (the stuck call cannot be interrupted)."""
    sys.stderr.write(f"envguard: error: {visible(scrub(message), lines=False)}\n")
    sys.stderr.flush()
    os._exit(EXIT_OPERATIONAL)


@contextmanager
def process_group(meeting: Rendezvous) -> Iterator[None]:
    """The gloo process group over the rendezvous' store, for the exchange; destroyed on the way out."""
    import torch.distributed as dist
    from torch.distributed import PrefixStore  # type: ignore[attr-defined]

    launch = meeting.launch
    try:
        dist.init_process_group(
            "gloo",
            store=PrefixStore("pg", meeting.store),
            rank=launch.rank,
            world_size=launch.world_size,
            timeout=timedelta(seconds=meeting.timeout_s),
        )
    except RuntimeError as exc:
        raise OperationalError(
            f"the {launch.world_size} ranks could not connect over gloo within {meeting.timeout_s:g} s: "
            f"{first_line(exc)} (set GLOO_SOCKET_IFNAME to the interface the hosts reach each other on)"
        ) from exc
    try:
        yield
    except RuntimeError as exc:
        raise OperationalError(
            f"the exchange between the ranks failed after every rank had measured: {first_line(exc)}; a rank "
            "died or its network dropped"
        ) from exc
    finally:
        dist.destroy_process_group()
