"""The line that names the ranks that did not report, how the missing are found (halving, not a request per
rank), and a real store: one rank alone at a two-rank rendezvous names the missing one within the timeout."""

from __future__ import annotations

import dataclasses
import socket

import pytest

from envguard.distributed.launcher import Launch
from envguard.distributed.rendezvous import MEASURED, absent, connect, find_missing
from envguard.errors import OperationalError, first_line

LAUNCH = Launch("Slurm", 0, 64, 0, "gpu-a001", 25242, "first host of SLURM_JOB_NODELIST")


def test_absent_names_who_stopped_and_who_never_came() -> None:
    line = absent([3, 9, 10, 11, 40], 5, {3: "gpu-a001", 40: "gpu-a006"}, 30, LAUNCH)
    assert line == (
        "5 of 64 ranks did not report within 30 s: ranks 3, 40 on gpu-a001, gpu-a006 joined, then stopped "
        "(died or hung while measuring); ranks 9-11 never reached the rendezvous at gpu-a001:25242 (first "
        "host of SLURM_JOB_NODELIST): died, never started, or cannot reach that host; the rank's own output "
        "says why"
    )
    assert "\n" not in line
    two = dataclasses.replace(LAUNCH, world_size=2)
    assert absent([1], 1, {}, 2.5, two).startswith("1 of 2 ranks did not report within 2.5 s: rank 1 never")
    assert absent([7], 300, {}, 30, LAUNCH).startswith(
        "300 of 64 ranks did not report within 30 s (the first 1 named): rank 7 never"
    )


def test_find_missing_halves_instead_of_asking_for_every_rank() -> None:
    asked: list[tuple[int, int]] = []
    gone = {17, 4000, 7999}

    def present(lo: int, hi: int) -> bool:
        asked.append((lo, hi))
        return not any(lo <= rank < hi for rank in gone)

    assert find_missing(present, 0, 8000, 16) == [17, 4000, 7999]
    assert len(asked) <= 3 * 2 * 13 + 1  # ~2 requests a level of halving for each missing rank
    asked.clear()
    assert find_missing(present, 0, 8000, 2) == [17, 4000] and len(asked) < 60
    assert find_missing(lambda lo, hi: True, 0, 8000, 16) == []
    assert find_missing(lambda lo, hi: False, 0, 100, 16) == list(range(16))


def test_first_line_drops_the_frames() -> None:
    assert (
        first_line(RuntimeError("Connection closed by peer\n frame #0: c10::..."))
        == "Connection closed by peer"
    )
    assert first_line(RuntimeError("")) == "RuntimeError"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_rank_alone_names_the_other_within_the_timeout() -> None:
    pytest.importorskip("torch.distributed")
    launch = Launch("Slurm", 0, 2, 0, "127.0.0.1", free_port(), "MASTER_ADDR, MASTER_PORT")
    meeting = connect(launch, 1.0)
    meeting.mark(MEASURED)
    with pytest.raises(OperationalError) as raised:
        meeting.wait(MEASURED)
    assert str(raised.value).startswith(
        "1 of 2 ranks did not report within 1 s: rank 1 never reached the rendezvous at 127.0.0.1:"
    )
