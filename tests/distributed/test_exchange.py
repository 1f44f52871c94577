"""The exchange's all-gather over a real one-rank gloo group: a summary in its fixed slot, and one longer
than the slot (the second round every rank runs when any overflows)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from datetime import timedelta

import pytest

from envguard.distributed.exchange import HEADER, SLOT, all_gather_bytes


@pytest.fixture
def one_rank() -> Iterator[None]:
    dist = pytest.importorskip("torch.distributed")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    store = dist.TCPStore("127.0.0.1", port, 1, True, timedelta(seconds=30))
    dist.init_process_group("gloo", store=store, rank=0, world_size=1)
    try:
        yield
    finally:
        dist.destroy_process_group()


@pytest.mark.usefixtures("one_rank")
def test_payloads_in_the_slot_and_beyond_it() -> None:
    for payload in (b"", b'{"rank":0}', b"x" * (SLOT - HEADER), b"y" * (SLOT - HEADER + 1), b"z" * 10_000):
        assert all_gather_bytes(payload, 1) == [payload]


@pytest.mark.parametrize(
    "payload", [b"not json", b'{"rank": "zero"}', b"[1, 2]", b'{"rank": 1}', b"[" * 100_000 + b"]" * 100_000]
)
def test_a_summary_another_envguard_sent_is_one_line_naming_the_rank(payload: bytes) -> None:
    """Issue 42: a rank sending bad JSON or a wrong type was an internal error (exit 4) on every rank."""
    from envguard.distributed.exchange import _read
    from envguard.distributed.records import from_wire
    from envguard.errors import OperationalError

    with pytest.raises(OperationalError, match=r"^rank 3 sent a summary this envguard cannot read \("):
        _read(from_wire, payload, 3)
