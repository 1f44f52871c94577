"""Following the hook's streams on real files: partial lines wait, bad lines are counted, the latest line of
each process counts."""

from __future__ import annotations

import json
from pathlib import Path

from envguard.watch.streams import StreamReader


def test_stream_reader_waits_for_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "7.jsonl"
    line = json.dumps(
        {
            "pid": 7,
            "rank": 1,
            "env": {},
            "error": "",
            "loaders": [
                {
                    "id": 0,
                    "settings": {"num_workers": 2},
                    "batches": 5,
                    "epochs": 0,
                    "wait_s": 1.0,
                    "step_s": 3.0,
                    "startup_s": 0.2,
                    "first_s": 0.2,
                }
            ],
        }
    )
    path.write_text(line[:30])
    reader = StreamReader(tmp_path)
    reader.poll()
    assert reader.loaders() == ()
    with path.open("a") as handle:
        handle.write(line[30:] + "\nnot json\n")
    reader.poll()
    (loader,) = reader.loaders()
    assert (loader.rank, loader.batches, loader.data_wait_fraction) == (1, 5, 0.25)
    assert reader.bad_lines == 1


def test_latest_line_per_process_and_the_first_environment(tmp_path: Path) -> None:
    def line(pid: int, batches: int, env: dict[str, str]) -> str:
        item = {
            "id": 0,
            "settings": {"num_workers": 0},
            "batches": batches,
            "epochs": 0,
            "wait_s": 0.5,
            "step_s": 0.5,
            "startup_s": 0.0,
            "first_s": 0.0,
        }
        return json.dumps({"pid": pid, "env": env, "error": "", "loaders": [item]}) + "\n"

    (tmp_path / "20.jsonl").write_text(line(20, 1, {}) + line(20, 9, {"python": "3.8.10"}))
    (tmp_path / "30.jsonl").write_text(line(30, 4, {}))
    reader = StreamReader(tmp_path)
    reader.poll()
    assert [(lt.pid, lt.batches) for lt in reader.loaders()] == [(20, 9), (30, 4)]
    env = reader.env()
    assert env is not None and env.python == "3.8.10"
