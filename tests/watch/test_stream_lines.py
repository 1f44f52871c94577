"""streams.parse_line: the hook's JSON lines decoded into records: typed settings and environment, a rank, the
hook's error, loader entries that are not whole skipped and counted, lines that are not the hook's refused."""

from __future__ import annotations

import json
from typing import Any

import pytest

from envguard.pipeline.costs import Setting
from envguard.watch.hook import sitecustomize as hook
from envguard.watch.records import JobEnvironment
from envguard.watch.streams import WireError, parse_line

ENV = {
    "python": "3.8.10",
    "executable": "/env/bin/python",
    "torch": "2.3.1+cu121",
    "torch_cuda": "12.1",
    "torch_git": "abc",
    "numpy": None,
    "cuda_visible_devices": "0",
}


def item(**fields: Any) -> dict[str, Any]:
    values: dict[str, Any] = {
        "id": 0,
        "settings": {
            "num_workers": 4,
            "pin_memory": True,
            "persistent_workers": False,
            "prefetch_factor": 2,
            "batch_size": 32,
            "dataset": "ImageFolder",
        },
        "batches": 50,
        "epochs": 1,
        "wait_s": 1.5,
        "step_s": 4.5,
        "startup_s": 2.0,
        "first_s": 2.0,
    }
    return {**values, **fields}


def line(**fields: Any) -> bytes:
    values: dict[str, Any] = {"pid": 7, "t": 1.0, "rank": 1, "env": ENV, "error": "", "loaders": [item()]}
    return json.dumps({**values, **fields}).encode()


def test_a_whole_line() -> None:
    parsed = parse_line(line())
    assert (parsed.pid, parsed.rank, parsed.error, parsed.bad_loaders) == (7, 1, "", 0)
    assert parsed.env == JobEnvironment(**ENV)
    (totals,) = parsed.loaders
    assert totals.settings == Setting(4, 2, False, True, batch_size=32, dataset="ImageFolder")
    assert (totals.pid, totals.rank, totals.batches, totals.loop_s, totals.data_wait_fraction) == (
        7,
        1,
        50,
        6.0,
        0.25,
    )


def test_no_environment_until_a_loader_and_no_rank_outside_torchrun() -> None:
    parsed = parse_line(line(env={}, rank=None, loaders=[]))
    assert parsed.env is None and parsed.rank is None and parsed.loaders == ()


class OddLoader:
    """A DataLoader look-alike whose settings are not what torch's hold."""

    num_workers = None
    pin_memory = 1
    batch_size = "32"


def test_settings_the_hook_could_not_read_are_none() -> None:
    odd = item(settings=hook._settings(OddLoader()))
    (totals,) = parse_line(line(loaders=[odd])).loaders
    read = totals.settings
    assert (read.num_workers, read.pin_memory, read.batch_size, read.workers) == (0, True, None, 0)


def test_loader_entries_that_are_not_whole_are_skipped_and_counted() -> None:
    broken = [item(id=1, batches="many"), {"id": 2}, item(id=3, settings="fast"), item(id=4)]
    parsed = parse_line(line(loaders=broken))
    assert [lt.id for lt in parsed.loaders] == [4] and parsed.bad_loaders == 3


def test_the_hooks_own_error_is_kept() -> None:
    parsed = parse_line(line(error="DataLoader timing: KeyError: 'x'", loaders=[]))
    assert parsed.error == "DataLoader timing: KeyError: 'x'"


@pytest.mark.parametrize("raw", [b"not json", b"[1, 2]", b'{"t": 1.0}', b'{"pid": "seven"}', b"7"])
def test_lines_that_are_not_the_hooks_are_refused(raw: bytes) -> None:
    with pytest.raises(WireError):
        parse_line(raw)
