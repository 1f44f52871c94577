"""Issue 10, `--sweep num_workers,...`: the user's own DataLoader timed as given (its sampler, collate_fn,
prefetch_factor, persistent_workers), varying only the arguments the user allows; rates from the synthetic
sweep's estimator (round 0 left out), efficiency bounded where an ideal exists and none claimed otherwise."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pytest

from envguard.smoke import loader_verdicts, runner, throughput
from envguard.smoke.report import DatasetResult
from tests.helpers import REPO, by_check, envguard, smoke_json

PLANTED = REPO / "tests" / "pipeline_planted.py"
sys.path.insert(0, str(runner.PACKAGE_PARENT))  # the in-environment package, as the module imports itself
from envguard_smoke import sweep  # noqa: E402

sys.path.insert(0, str(PLANTED.parent))
import pipeline_planted as planted  # noqa: E402

RATE = "your loader's rate per configuration"


def swept(
    name: str, allowed: list[str], workers: list[int]
) -> tuple[list[dict[str, Any]], list[DatasetResult]]:
    settings = {"loader": f"{PLANTED}:{name}", "sweep": allowed, "workers": workers}
    entries = sweep.run(settings, time.perf_counter() + 20)
    return entries, [throughput.summarize(loader_verdicts.claimable(e), 2) for e in entries]


def test_a_rebuilt_loader_keeps_everything_but_the_swept_argument() -> None:
    given = planted.storage_bound_loader()
    built = sweep.rebuild(given, {"num_workers": 2})
    assert built.num_workers == 2 and built.batch_sampler.sampler is given.sampler
    assert built.sampler is given.sampler and built.sampler.generator is given.sampler.generator
    assert (built.batch_size, built.drop_last) == (16, False)
    assert built.collate_fn is planted.keyed_collate and built.prefetch_factor == 4
    assert built.persistent_workers is True
    zero = sweep.rebuild(given, {"num_workers": 0})  # DataLoader refuses prefetch/persistent without workers
    assert zero.prefetch_factor is None and zero.persistent_workers is False


def test_sweep_times_the_loader_as_given_with_bounded_efficiency() -> None:
    entries, (dataset,) = swept("storage_bound_loader", ["num_workers"], [0, 2])
    raw = entries[0]["rows"]
    assert [(r["workers"], r["prefetch_factor"], r["given"]) for r in raw] == [
        (0, None, False),
        (1, 4, True),  # the loader's own num_workers=1, measured as given
        (2, 4, False),  # prefetch_factor stays the loader's: it was not allowed to change
    ]
    assert dataset.latency_ms and dataset.latency_ms >= 2.0  # the 2 ms wait, profiled in a worker
    for row in dataset.rows:
        assert row.rounds == 9 and row.samples_per_s, row  # 1 + 8 rounds; round 0 is left out of the rate
        assert row.efficiency is not None and 0.0 < row.efficiency <= throughput.MAX_EFFICIENCY, row


def test_overhead_bound_loader_claims_no_ideal() -> None:
    _entries, (dataset,) = swept("overhead_bound_loader", ["num_workers"], [0, 2])
    assert dataset.latency_ms is None and all(r.efficiency is None and not r.unreliable for r in dataset.rows)
    assert all(r.samples_per_s for r in dataset.rows)  # rates are still reported
    rec = throughput.recommend(dataset, cuda=False)
    (rates, _config) = loader_verdicts.sweep(dataset, rec, {"num_workers": 1, "prefetch_factor": 4})
    assert "no ideal claimed" in rates.evidence and " = 0." not in rates.evidence, rates


def test_prefetch_factor_sweep_reports_each_factor() -> None:
    entries, datasets = swept("storage_bound_loader", ["prefetch_factor"], [0, 2])
    assert [d.name for d in datasets] == [
        "your loader, prefetch_factor=2",
        "your loader, prefetch_factor=4",
    ]
    assert {r.workers for d in datasets for r in d.rows} == {1}  # num_workers was not allowed to change
    assert sum(r["given"] for e in entries for r in e["rows"]) == 1


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (("--sweep", "batch_size", "--loader", f"{PLANTED}:storage_bound_loader"), "--sweep batch_size"),
        (("--sweep", "num_workers"), "give it with --loader FILE.py:NAME"),
    ],
)
def test_bad_sweep_is_one_line_exit_2(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], says: str
) -> None:
    code = envguard("smoke", *argv)
    err = capsys.readouterr().err
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.slow
def test_smoke_sweep_end_to_end(prefix: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, data = smoke_json(
        capsys,
        str(prefix),
        "--budget",
        "25",
        "--loader",
        f"{PLANTED}:storage_bound_loader",
        "--sweep",
        "num_workers",
        "--workers",
        "0,2",
    )
    checks = by_check(data)
    assert code in (0, 1), checks
    assert checks[RATE]["status"] == "INFO" and "N=2:" in checks[RATE]["evidence"], checks[RATE]
    assert checks["your loader's configuration"]["status"] in ("PASS", "WARN")
    (dataset,) = [d for d in data["datasets"] if d["name"] == "your loader"]
    assert sorted(r["workers"] for r in dataset["rows"]) == [0, 1, 2]
