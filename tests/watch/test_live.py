"""The live display: its panel fits 80 columns with a real sample of this process."""

from __future__ import annotations

import os

from rich.console import Console

from envguard.watch.live import panel
from envguard.watch.records import Sample
from envguard.watch.sampler import Sampler


def test_live_panel_fits_80_columns() -> None:
    sampler = Sampler(os.getpid(), 0.1)
    sampler.processes()
    sampler.host()
    sample = Sample(t=1.0, procs=sampler.processes(), host=sampler.host(), gpus=(), loaders=())
    console = Console(width=80, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(
        panel(sample, "input-bound: the loop waits for data 62% of the time; 2 workers at 100% CPU", 3)
    )
    text = console.export_text()
    assert text and max(len(line) for line in text.splitlines()) <= 80
    assert str(os.getpid()) in text and "input-bound" in text
