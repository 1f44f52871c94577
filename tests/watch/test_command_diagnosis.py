"""`envguard watch` on real training scripts: the diagnosis names the bottleneck and a fix whose gain
holds."""

from __future__ import annotations

from tests.watch.helpers import Watch, Watched

AUGMENT = ("--cpu-ms", "10", "--step-ms", "10")  # 40 ms of augmentation per batch, a 10 ms step


def _loader(watched: Watched) -> dict[str, object]:
    loaders = watched.report["run"]["loaders"]
    assert len(loaders) == 1, loaders
    return dict(loaders[0])


def _check_bounds(watched: Watched) -> None:
    """Every fraction lies in 0..1, every rate is positive, and a predicted speed-up is at least 1."""
    fraction = watched.report["data_wait_fraction"]
    assert 0.0 <= fraction <= 1.0
    for row in watched.report["timeline"]:
        assert row["data_wait_fraction"] is None or 0.0 <= row["data_wait_fraction"] <= 1.0
    rec = watched.diagnosis["recommendation"]
    if rec and rec["expected_speedup"] is not None:
        assert rec["expected_speedup"] >= 1.0


def test_augmentation_bound_loader_gets_the_final_worker_count_in_one_step(watch: Watch) -> None:
    """1 worker doing 40 ms of augmentation per batch on a 2-core machine: CPU-bound input, num_workers=2
    recommended with the model's predicted gain and its rule in --json (whether the gain holds when applied
    is measured by scripts/bench/bench_pipeline_advice.py, not here: no timed assertions in tests)."""
    first = watch("--workers", "1", "--batches", "80", *AUGMENT)
    assert first.code == 0, first.stderr
    diagnosis = first.diagnosis
    assert diagnosis["verdict"] == "input-bound", diagnosis["headline"]
    assert diagnosis["cause"] == "cpu", diagnosis["headline"]
    rec = diagnosis["recommendation"]
    assert rec["setting"] == "num_workers" and rec["value"] == 2, rec
    assert rec["rule"] == "spare-cores" and rec["dataloader"].startswith("DataLoader(num_workers=2")
    assert 1.0 < rec["expected_speedup"] <= 2.0  # two workers at most double a CPU-bound producer
    costs = diagnosis["pipeline"]["costs"]
    assert 0.03 <= costs["load_cpu"] <= 0.06  # 4 samples x 10 ms of CPU, on the CPU clock whatever the load
    _check_bounds(first)


def test_sleeping_loader_is_input_bound_on_io(watch: Watch) -> None:
    """Workers sleeping 8 ms per sample (remote storage): input-bound, I/O/latency, more workers
    recommended."""
    watched = watch("--workers", "2", "--batches", "150", "--sleep-ms", "8", "--step-ms", "5")
    assert watched.code == 0, watched.stderr
    diagnosis = watched.diagnosis
    assert diagnosis["verdict"] == "input-bound", diagnosis["headline"]
    assert diagnosis["cause"] in ("latency", "io"), diagnosis["headline"]
    assert diagnosis["data_wait_fraction"] > 0.5
    rec = diagnosis["recommendation"]
    assert rec["setting"] == "num_workers" and rec["value"] > 2
    assert "workers wait off the CPU" in rec["text"] and rec["rule"] == "overlap-waits"
    _check_bounds(watched)


def test_compute_heavy_step_with_fast_loader_is_not_input_bound(watch: Watch) -> None:
    watched = watch("--workers", "1", "--batches", "60", "--compute-ms", "40")
    assert watched.code == 0, watched.stderr
    diagnosis = watched.diagnosis
    assert diagnosis["verdict"] == "not input-bound", diagnosis["headline"]
    assert diagnosis["data_wait_fraction"] < 0.10
    assert diagnosis["recommendation"] is None
    assert "nothing to fix in the input pipeline" in diagnosis["headline"]
    _check_bounds(watched)


def test_leaking_workers_memory_growth_is_reported(watch: Watch) -> None:
    """Each sample leaves 1 MiB behind in its worker (well above the threshold, even when a loaded machine
    samples late): the report names the growth and the copy-on-read fix."""
    watched = watch(
        "--workers", "1", "--batches", "60", "--leak-kb", "1024", "--sleep-ms", "2", interval=0.25
    )
    assert watched.code == 0, watched.stderr
    growth = [f for f in watched.diagnosis["findings"] if f["check"] == "worker memory growth"]
    assert growth and growth[0]["status"] == "WARN", watched.diagnosis["findings"]
    assert "copy-on-read" in growth[0]["fix"]
    worker_uss = [
        p["uss"] for s in watched.report["samples"] for p in s["procs"] if p["role"] == "worker" and p["uss"]
    ]
    assert max(worker_uss) - min(worker_uss) >= 64 * 1024 * 1024


def test_fast_clean_loader_reports_stable_worker_memory(watch: Watch) -> None:
    watched = watch("--workers", "1", "--batches", "150", "--sleep-ms", "2", interval=0.25)
    growth = [f for f in watched.diagnosis["findings"] if f["check"] == "worker memory growth"]
    assert growth and growth[0]["status"] == "PASS", watched.diagnosis["findings"]


def test_cpu_bound_workers_on_every_core_get_cheaper_batches_not_more_workers(watch: Watch) -> None:
    from envguard.machine.host import cpu_info

    usable = cpu_info().usable
    watched = watch("--workers", str(usable), "--batches", str(60 * usable), *AUGMENT)
    assert watched.code == 0, watched.stderr
    diagnosis = watched.diagnosis
    assert diagnosis["verdict"] == "input-bound", diagnosis["headline"]
    assert diagnosis["cause"] == "all-cores-busy", diagnosis["headline"]
    rec = diagnosis["recommendation"]
    assert rec["setting"] == "augmentation" and rec["expected_speedup"] == 1.0
    assert "more workers cannot help" in rec["text"] and "make each batch cheaper" in rec["text"]


def test_loading_in_the_main_process_gets_workers(watch: Watch) -> None:
    watched = watch("--workers", "0", "--batches", "100", "--sleep-ms", "5", "--step-ms", "5")
    assert watched.code == 0, watched.stderr
    diagnosis = watched.diagnosis
    assert diagnosis["verdict"] == "input-bound" and diagnosis["cause"] == "in-main", diagnosis["headline"]
    rec = diagnosis["recommendation"]
    assert rec["setting"] == "num_workers" and rec["value"] >= 1
    # 20 ms of loading + 5 ms of step per batch in one process; workers overlap them: at most 25/5 = 5x
    assert 1.0 < rec["expected_speedup"] <= 5.0


def test_a_step_with_more_threads_than_usable_cores_is_told_how_many_to_run(watch: Watch) -> None:
    """torch sizes its thread pool from the host's cores, not the job's affinity or quota: a CPU step with
    two threads more than the usable cores gets a WARN naming torch.set_num_threads(K), K at most the usable
    cores (fewer where other load takes some); the same step on one thread gets none."""
    import os

    usable = len(os.sched_getaffinity(0))
    step = ("--workers", "0", "--batches", "150", "--compute-ms", "20")
    over = watch(*step, "--threads", str(usable + 2))
    assert over.code == 0, over.stderr
    assert over.diagnosis["pipeline"]["step_threads"] == usable + 2
    (finding,) = [f for f in over.diagnosis["findings"] if f["check"] == "intra-op threads"]
    assert finding["status"] == "WARN", finding
    advised = int(finding["fix"].split("torch.set_num_threads(")[1].split(")")[0])
    assert 1 <= advised <= over.report["run"]["usable_cpus"], finding
    assert f"torch's {usable + 2} intra-op threads" in finding["evidence"]
    fitting = watch(*step, "--threads", "1")
    assert fitting.code == 0, fitting.stderr
    assert not [f for f in fitting.diagnosis["findings"] if f["check"] == "intra-op threads"]
