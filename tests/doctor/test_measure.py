"""What doctor measures, on the machines the issue names: real NVML (absent here), a GPU box without
nvidia-ml-py (crafted /proc/driver/nvidia and /dev trees), ranks per node, fractional quotas, real cold
reads; each measured record then judged by its verdict."""

from __future__ import annotations

from pathlib import Path

import pytest

from envguard.doctor.verdicts import gpu
from envguard.machine import coldread, host
from envguard.machine.gpu import NvmlReport, cuda_version_text, driver_presence, pcie_gbps, read_nvml
from envguard.machine.host import CpuInfo
from envguard.pipeline.model import most_workers

NO_NVML = NvmlReport(available=False, reason="nvidia-ml-py is not installed (pip install nvidia-ml-py)")


def nvidia_tree(tmp_path: Path, gpus: int = 2) -> tuple[Path, Path]:
    proc, dev = tmp_path / "proc_driver_nvidia", tmp_path / "dev"
    dev.mkdir()
    for i in range(gpus):
        folder = proc / "gpus" / f"0000:{0x17 + i:02x}:00.0"
        folder.mkdir(parents=True)
        (folder / "information").write_text(
            f"Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   {100 + i}\nBus Type:\t PCIe\n"
        )
        (dev / f"nvidia{i}").write_text("")
    (dev / "nvidiactl").write_text("")
    (dev / "nvidia-uvm").write_text("")
    (proc / "version").write_text(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 2024\n"
    )
    return proc, dev


def test_pcie_and_cuda_versions() -> None:
    assert pcie_gbps(4, 16) == pytest.approx(31.5, abs=0.05)
    assert pcie_gbps(5, 16) == pytest.approx(63.0, abs=0.05)
    assert pcie_gbps(None, 16) is None
    assert cuda_version_text(12040) == "12.4" and cuda_version_text(11080) == "11.8"


def test_no_gpu_is_reported_cleanly_from_real_nvml() -> None:
    report = read_nvml()
    if report.available and report.gpus:
        pytest.skip("this machine has a GPU")
    found = gpu.gpu_findings(report)
    assert [f.status for f in found] == ["INFO"] and "no GPU" in found[0].evidence and found[0].fix


def test_gpu_found_without_nvml(tmp_path: Path) -> None:
    presence = driver_presence(*nvidia_tree(tmp_path))
    assert (
        presence.count == 2 and presence.driver == "550.54.15" and presence.devices == ("nvidia0", "nvidia1")
    )
    found = gpu.gpu_findings(NO_NVML, presence)
    assert found[0].status == "WARN" and "2 NVIDIA GPU" in found[0].evidence and "H100" in found[0].evidence


def test_no_driver_no_gpu(tmp_path: Path) -> None:
    presence = driver_presence(tmp_path / "nothing", tmp_path)
    assert presence.count == 0
    assert gpu.gpu_findings(NO_NVML, presence)[0].status == "INFO"


def cpus(usable: int, quota: float | None = None) -> CpuInfo:
    return CpuInfo(logical=64, affinity=64, physical=usable, quota=quota, usable=usable)


def test_workers_per_rank() -> None:
    assert most_workers(cpus(16).usable, 1) == 15
    assert most_workers(cpus(16).usable, 4) == 3  # Lightning: cpu_count // local_world_size - 1
    assert most_workers(cpus(2).usable, 2) == 0
    assert host.ranks_per_node({"LOCAL_WORLD_SIZE": "4"}, 8) == (4, "LOCAL_WORLD_SIZE")
    assert host.ranks_per_node({}, 8) == (8, "one rank per visible GPU")
    assert host.ranks_per_node({}, 0) == (1, "one process")
    assert host.visible_gpu_count({"CUDA_VISIBLE_DEVICES": "0,1"}, 8) == 2
    assert (
        host.visible_gpu_count({"CUDA_VISIBLE_DEVICES": "MIG-8b3e4c1a-1111-2222-3333-444455556666"}, 1) == 1
    )
    assert host.visible_gpu_count({"CUDA_VISIBLE_DEVICES": "0,-1,2"}, 8) == 1


def test_fractional_quota_is_floored(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    (root / "job").mkdir(parents=True)
    (root / "job" / "cpu.max").write_text("150000 100000\n")
    proc = tmp_path / "cgroup_of_self"
    proc.write_text("0::/job\n")
    info = host.cpu_info(root, proc)
    assert info.quota == pytest.approx(1.5) and info.usable == 1


def test_read_latency_of_real_files(tmp_path: Path) -> None:
    for i in range(8):
        (tmp_path / f"{i}.bin").write_bytes(bytes([i]) * 131072)
    latency = coldread.measure(tmp_path)
    assert latency.samples == 8 and 0 < latency.median_ms < 1000
