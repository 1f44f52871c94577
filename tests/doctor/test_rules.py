"""Doctor rules over measured facts: GPU, torch/CUDA compatibility, CPUs, memory, /dev/shm, files, data
disk."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from envguard.doctor import gpu_rules, host_rules
from envguard.machine.disk import DiskInfo
from envguard.machine.gpu import GpuInfo, NvmlReport, cuda_version_text, pcie_gbps, read_nvml
from envguard.machine.host import CpuInfo, MemoryInfo, ShmInfo
from envguard.model import Fingerprints
from envguard.prefix.integrity import FileProblem, IntegrityReport

A100 = GpuInfo(
    index=0,
    name="NVIDIA A100-SXM4-80GB",
    capability="sm_80",
    memory_total=80 * 2**30,
    memory_used=2**30,
    utilization=0,
    pcie_gen=1,
    pcie_width=16,
    pcie_max_gen=4,
    pcie_max_width=16,
)
GPU_HOST = NvmlReport(available=True, driver="535.104.05", cuda_driver="12.2", gpus=(A100,))
NO_GPU = NvmlReport(available=False, reason="no NVIDIA driver (NVML Shared Library Not Found)")


def torch(cuda: str | None, arch: tuple[str, ...] = ()) -> Fingerprints:
    return Fingerprints(torch_version="2.3.1", torch_cuda=cuda, cuda_arch_list=arch)


def test_pcie_and_cuda_versions() -> None:
    assert pcie_gbps(4, 16) == pytest.approx(31.5, abs=0.05) and pcie_gbps(5, 16) == pytest.approx(
        63.0, abs=0.05
    )
    assert pcie_gbps(None, 16) is None
    assert cuda_version_text(12040) == "12.4" and cuda_version_text(11080) == "11.8"


def test_no_gpu_is_reported_cleanly_from_real_nvml() -> None:
    report = read_nvml()
    if report.available and report.gpus:
        pytest.skip("this machine has a GPU")
    found = gpu_rules.gpu_findings(report)
    assert [f.status for f in found] == ["INFO"] and "no GPU" in found[0].evidence and found[0].fix


def test_gpu_present() -> None:
    found = gpu_rules.gpu_findings(GPU_HOST)
    assert (
        found[0].status == "PASS"
        and "A100" in found[0].evidence
        and "Gen1 x16 (max Gen4 x16)" in found[0].evidence
    )
    x8 = dataclasses.replace(A100, pcie_width=8, pcie_max_width=8)
    narrow = NvmlReport(available=True, driver="1", cuda_driver="12.2", gpus=(x8,))
    assert gpu_rules.gpu_findings(narrow)[0].status == "WARN"


def test_cpu_build_of_torch_on_a_gpu_machine_fails() -> None:
    found = gpu_rules.torch_findings(torch(None), "", GPU_HOST)
    assert found[0].status == "FAIL" and "CPU build" in found[0].evidence and "pytorch-cuda" in found[0].fix
    assert gpu_rules.torch_findings(torch(None), "", NO_GPU)[0].status == "PASS"
    assert gpu_rules.torch_findings(torch("12.1"), "", NO_GPU)[0].status == "INFO"


@pytest.mark.parametrize(
    ("runtime", "status"), [("12.1", "PASS"), ("12.2", "PASS"), ("12.4", "WARN"), ("13.0", "FAIL")]
)
def test_driver_against_torch_cuda(runtime: str, status: str) -> None:
    found = {f.check: f for f in gpu_rules.torch_findings(torch(runtime, ("sm_80",)), "", GPU_HOST)}
    assert found["driver vs torch CUDA"].status == status


@pytest.mark.parametrize(
    ("arch", "status"),
    [
        (("sm_80", "sm_90"), "PASS"),
        (("sm_75",), "FAIL"),
        (("sm_70", "compute_70"), "WARN"),
        (("sm_86",), "FAIL"),
    ],
)
def test_kernels_for_the_device(arch: tuple[str, ...], status: str) -> None:
    found = {f.check: f for f in gpu_rules.torch_findings(torch("12.1", arch), "", GPU_HOST)}
    assert found["kernels for GPU 0"].status == status


def test_sm86_runs_sm80_kernels() -> None:
    rtx = dataclasses.replace(A100, name="RTX 3090", capability="sm_86")
    ampere = NvmlReport(available=True, driver="1", cuda_driver="12.2", gpus=(rtx,))
    found = {f.check: f for f in gpu_rules.torch_findings(torch("12.1", ("sm_80",)), "", ampere)}
    assert found["kernels for GPU 0"].status == "PASS"


def test_torch_missing_or_unprobed() -> None:
    assert gpu_rules.torch_findings(None, "python crashed", NO_GPU)[0].evidence == "python crashed"
    assert gpu_rules.torch_findings(Fingerprints(), "", NO_GPU)[0].status == "INFO"


def test_cpu_quota_and_recommendation() -> None:
    limited = CpuInfo(logical=64, affinity=64, physical=4, quota=4.0, usable=4)
    found = host_rules.cpu_findings(limited)
    assert found[0].status == "WARN" and "torch.set_num_threads(4)" in found[0].fix
    assert (
        found[1].check == "recommended num_workers" and "num_workers=3" in found[1].evidence and found[1].fix
    )


def test_shm_too_small_fails() -> None:
    docker_default = ShmInfo(path="/dev/shm", exists=True, total=64 * 2**20, free=64 * 2**20)
    found = host_rules.shm_findings(docker_default, workers=3)
    assert found[0].status == "FAIL" and "--shm-size" in found[0].fix
    roomy = ShmInfo(path="/dev/shm", exists=True, total=16 * 2**30, free=16 * 2**30)
    assert host_rules.shm_findings(roomy, workers=3)[0].status == "PASS"


def test_open_files_and_memory() -> None:
    assert host_rules.open_files_findings((1024, 4096))[0].status == "WARN"
    assert "ulimit -n 4096" in host_rules.open_files_findings((1024, 4096))[0].fix
    assert host_rules.open_files_findings((65536, None))[0].status == "PASS"
    assert (
        host_rules.memory_findings(MemoryInfo(total=2**34, available=2**30, cgroup_limit=None))[0].status
        == "WARN"
    )
    assert (
        host_rules.memory_findings(MemoryInfo(total=2**34, available=2**33, cgroup_limit=None))[0].status
        == "PASS"
    )


def data(fstype: str, rotational: bool | None, size: int = 10 * 2**30, files: int = 100) -> DiskInfo:
    return DiskInfo(
        path="/data",
        mount_point="/data",
        fstype=fstype,
        source="/dev/sdb1",
        rotational=rotational,
        files=files,
        bytes=size,
        truncated=False,
    )


def test_data_disk() -> None:
    shm = ShmInfo(path="/dev/shm", exists=True, total=2**32, free=2**32)
    assert host_rules.disk_findings(data("ext4", True), shm)[0].status == "WARN"
    assert "WebDataset" in host_rules.disk_findings(data("ext4", True), shm)[0].fix
    assert host_rules.disk_findings(data("nfs4", None), shm)[0].status == "WARN"
    assert host_rules.disk_findings(data("ext4", False), shm)[0].status == "PASS"
    small = host_rules.disk_findings(data("ext4", False, size=2**20), shm)[0]
    assert small.status == "INFO" and "fits in /dev/shm" in small.evidence
    assert host_rules.disk_findings(data("ext4", False, files=0), shm)[0].status == "WARN"
    assert host_rules.disk_findings(None, shm)[0].status == "INFO"


def test_health() -> None:
    problems = (
        FileProblem("zlib-1.3.1-h4ab18f5_1", "lib/libz.so", "missing", "not in the prefix"),
        FileProblem("numpy-1.26.4-py311_0", "lib/x.py", "altered", "sha256 …"),
    )
    bad = host_rules.health_findings(IntegrityReport(str(Path("/env")), 3, 40, 0, problems), "")
    assert bad[0].status == "FAIL" and "1 missing and 1 altered" in bad[0].evidence
    assert "--force-reinstall" in bad[0].fix and "numpy zlib" in bad[0].fix
    assert host_rules.health_findings(IntegrityReport("/env", 3, 40, 0, ()), "")[0].status == "PASS"
    assert host_rules.health_findings(None, "not conda")[0].status == "INFO"


def test_every_non_pass_finding_says_what_to_do() -> None:
    from envguard.doctor.facts import DoctorFacts

    facts = DoctorFacts(
        environment="/env",
        cpus=CpuInfo(logical=8, affinity=8, physical=2, quota=2.0, usable=2),
        memory=MemoryInfo(total=2**30, available=2**29, cgroup_limit=None),
        shm=ShmInfo(path="/dev/shm", exists=True, total=2**20, free=2**20),
        open_files=(256, 1024),
        nvml=GPU_HOST,
        torch=torch(None),
        disk=data("nfs", None),
        integrity=None,
        integrity_note="not conda",
    )
    found = host_rules.all_findings(facts)
    assert {f.status for f in found} >= {"FAIL", "WARN", "INFO", "PASS"}
    assert all(f.fix for f in found if f.status != "PASS")
