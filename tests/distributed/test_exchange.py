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
