"""Doctor's host verdicts over hand-built records: CPUs and the num_workers advice, /dev/shm, open files,
RAM."""

from __future__ import annotations

from envguard.doctor.verdicts import host
from envguard.machine.host import CpuInfo, MemoryInfo, ShmInfo


def cpus(usable: int, quota: float | None = None) -> CpuInfo:
    return CpuInfo(logical=64, affinity=64, physical=usable, quota=quota, usable=usable)


def test_cpu_quota_and_recommendation() -> None:
    limited = CpuInfo(logical=64, affinity=64, physical=4, quota=4.0, usable=4)
    found = host.cpu_findings(limited)
    assert found[0].status == "WARN" and "torch.set_num_threads(4)" in found[0].fix
    assert (
        found[1].check == "num_workers"
        and "at most num_workers=3 per rank" in found[1].evidence
        and found[1].fix
    )
    assert host.cpu_findings(cpus(64))[0].status == "PASS"


def test_workers_advice_is_per_rank() -> None:
    advice = host.cpu_findings(cpus(16), ranks=4, ranks_source="LOCAL_WORLD_SIZE")[-1]
    assert (
        "num_workers=3" in advice.evidence
        and "4 ranks" in advice.evidence
        and "LOCAL_WORLD_SIZE" in advice.evidence
    )


def test_shm_too_small_fails() -> None:
    docker_default = ShmInfo(path="/dev/shm", exists=True, total=64 * 2**20, free=64 * 2**20)
    found = host.shm_findings(docker_default, workers=3)
    assert found[0].status == "FAIL" and "--shm-size" in found[0].fix
    roomy = ShmInfo(path="/dev/shm", exists=True, total=16 * 2**30, free=16 * 2**30)
    assert host.shm_findings(roomy, workers=3)[0].status == "PASS"
    missing = ShmInfo(path="/dev/shm", exists=False, total=0, free=0)
    assert host.shm_findings(missing, workers=3)[0].status == "INFO"


def test_open_files_and_memory() -> None:
    assert host.open_files_findings((1024, 4096))[0].status == "WARN"
    assert "ulimit -n 4096" in host.open_files_findings((1024, 4096))[0].fix
    assert host.open_files_findings((65536, None))[0].status == "PASS"
    low = MemoryInfo(total=2**34, available=2**30, cgroup_limit=None)
    assert host.memory_findings(low)[0].status == "WARN"
    plenty = MemoryInfo(total=2**34, available=2**33, cgroup_limit=None)
    assert host.memory_findings(plenty)[0].status == "PASS"
    capped = MemoryInfo(total=2**34, available=2**33, cgroup_limit=2**31)
    assert host.memory_findings(capped)[0].status == "WARN"
