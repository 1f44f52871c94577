"""The whole checklist (`all_findings`) over hand-built facts: every concern present, in display order, and
every finding that is not a PASS says what to do."""

from __future__ import annotations

from envguard.doctor.records import DoctorFacts
from envguard.doctor.verdicts import all_findings
from envguard.machine.disk import DiskInfo
from envguard.machine.gpu import GpuInfo, NvmlReport
from envguard.machine.host import CpuInfo, MemoryInfo, ShmInfo
from envguard.model import Fingerprints

GPU = GpuInfo(0, "NVIDIA A100-SXM4-80GB", "sm_80", 80 * 2**30, 2**30, 0, 1, 16, 4, 16)


def facts() -> DoctorFacts:
    return DoctorFacts(
        environment="/env",
        cpus=CpuInfo(logical=8, affinity=8, physical=2, quota=2.0, usable=2),
        memory=MemoryInfo(total=2**30, available=2**29, cgroup_limit=None),
        shm=ShmInfo(path="/dev/shm", exists=True, total=2**20, free=2**20),
        open_files=(256, 1024),
        nvml=NvmlReport(available=True, driver="535.104.05", cuda_driver="12.2", gpus=(GPU,)),
        torch=Fingerprints(torch_version="2.3.1", torch_cuda=None),
        disk=DiskInfo("/data", "/data", "nfs", "server:/data", None, 100, 10 * 2**30, False),
        integrity=None,
        integrity_note="not conda",
    )


def test_every_non_pass_finding_says_what_to_do() -> None:
    found = all_findings(facts())
    assert {f.status for f in found} >= {"FAIL", "WARN", "INFO", "PASS"}
    assert all(f.fix for f in found if f.status != "PASS")


def test_concerns_in_display_order() -> None:
    order = [f.category for f in all_findings(facts())]
    firsts = sorted(set(order), key=order.index)
    assert firsts == ["gpu", "torch", "cpu", "memory", "data", "environment"]
