"""The live display's state: the recent samples, a provisional diagnosis over them, the panel to show."""

from __future__ import annotations

import threading
from typing import Any

from envguard.watch.model import HookStatus, Sample, WatchRun
from envguard.watch.run import WatchOptions

WINDOW = 30  # samples the live verdict looks back over


class LiveView:
    def __init__(self, options: WatchOptions, live: Any) -> None:
        from envguard.machine.host import cpu_info

        self.options = options
        self.live = live
        self.samples: list[Sample] = []
        self.cpus = cpu_info()
        self.lock = threading.Lock()
        self.status = ""

    def headline(self) -> str:
        from envguard.watch.diagnose import diagnose

        recent = tuple(self.samples[-WINDOW:])
        run = WatchRun(
            command=self.options.command,
            pid=0,
            interval=self.options.interval,
            started="",
            duration=recent[-1].t,
            exit_code=None,
            usable_cpus=self.cpus.usable,
            physical_cpus=self.cpus.physical,
            hook=HookStatus(state="active" if recent[-1].loaders else "no-loader"),
            samples=recent,
            loaders=recent[-1].loaders,
        )
        return diagnose(run).headline

    def update(self, sample: Sample) -> None:
        from envguard.watch.render import panel

        self.samples.append(sample)
        with self.lock:
            self.live.update(panel(sample, self.headline(), sample.t, self.status))

    def print(self, text: str, complete: bool) -> None:
        """A complete line of the job's output goes above the panel; a \r progress segment into it."""
        with self.lock:
            if complete:
                self.status = ""
                self.live.console.print(text, markup=False, highlight=False)
            else:
                self.status = text
