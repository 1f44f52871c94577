"""contention.py: contention evidence from real files: crafted cgroup v2 trees and PSI files under tmp, and
this machine's own."""

from __future__ import annotations

import time
from pathlib import Path

from envguard.smoke.envguard_smoke import contention

STAT = "usage_usec {u}\nuser_usec 1\nsystem_usec 1\nnr_periods {p}\nnr_throttled {n}\nthrottled_usec {t}\n"
PSI = "some avg10=1.00 avg60=0.50 avg300=0.10 total={some}\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"


def cgroup_tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    root = tmp_path / "sys" / "fs" / "cgroup"
    job = root / "kubepods.slice" / "pod42" / "trainer"
    job.mkdir(parents=True)
    (job / "cpu.max").write_text("150000 100000\n")
    (job / "cpu.stat").write_text(STAT.format(u=0, p=0, n=0, t=0))
    proc = tmp_path / "proc_self_cgroup"
    proc.write_text("0::/kubepods.slice/pod42/trainer\n")
    return root, proc, job / "cpu.stat"


def test_own_cpu_stat_resolves_the_cgroup(tmp_path: Path) -> None:
    root, proc, stat = cgroup_tree(tmp_path)
    assert contention.own_cpu_stat(str(proc), str(root)) == str(stat)
    proc.write_text("12:cpu,cpuacct:/docker/abc\n")  # cgroup v1 only: no cpu.stat in v2 form
    assert contention.own_cpu_stat(str(proc), str(root)) is None


def test_throttling_and_pressure_over_a_window(tmp_path: Path) -> None:
    _root, _proc, stat = cgroup_tree(tmp_path)
    psi = tmp_path / "pressure_cpu"
    psi.write_text(PSI.format(some=5_000_000))
    watch = contention.Contention(None, str(stat), str(psi))
    time.sleep(0.2)
    stat.write_text(STAT.format(u=300000, p=2, n=2, t=100000))  # throttled 0.1 s in two periods
    psi.write_text(PSI.format(some=5_060_000))  # some task waited 60 ms
    found = watch.result()
    assert found["window_s"] >= 0.2 and found["nr_throttled"] == 2
    assert 0.0 < found["throttled_fraction"] <= 0.5  # 0.1 s over a window of at least 0.2 s
    assert 0.0 < found["psi_some_fraction"] <= 0.3
    assert found["others_cpu_fraction"] is None  # /proc/stat ticks are 10 ms: not read under 1 s


def test_missing_files_are_no_evidence(tmp_path: Path) -> None:
    found = contention.Contention(None, str(tmp_path / "nope"), str(tmp_path / "nope2")).result()
    assert found["throttled_fraction"] is None and found["psi_some_fraction"] is None
    assert contention.psi_some_total(str(tmp_path / "nope")) is None


def test_this_machines_pressure_file_parses() -> None:
    if Path(contention.PSI_CPU).exists():
        assert isinstance(contention.psi_some_total(), int)
