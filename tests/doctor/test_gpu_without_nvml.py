"""Doctor on the machines the issue names: a GPU box without nvidia-ml-py (crafted /proc/driver/nvidia and
/dev trees), a CPU torch there, sm_90a arch lists, ranks per node, fractional quotas and a virtio disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from envguard.doctor import gpu_rules, host_rules
from envguard.machine import coldread, host
from envguard.machine.disk import DiskInfo
from envguard.machine.gpu import DriverPresence, NvmlReport, driver_presence
from envguard.machine.host import CpuInfo, ShmInfo
from envguard.model import Fingerprints

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


def test_gpu_found_without_nvml(tmp_path: Path) -> None:
    presence = driver_presence(*nvidia_tree(tmp_path))
    assert (
        presence.count == 2 and presence.driver == "550.54.15" and presence.devices == ("nvidia0", "nvidia1")
    )
    found = gpu_rules.gpu_findings(NO_NVML, presence)
    assert (
        found[0].status == "WARN"
        and "2 NVIDIA GPU" in found[0].evidence
        and "no GPU" not in found[0].evidence
    )
    assert "nvidia-ml-py" in found[0].fix and "H100" in found[0].evidence


def test_no_driver_no_gpu(tmp_path: Path) -> None:
    presence = driver_presence(tmp_path / "nothing", tmp_path)
    assert presence.count == 0
    assert gpu_rules.gpu_findings(NO_NVML, presence)[0].status == "INFO"


def test_cpu_torch_on_a_gpu_machine_without_nvml_fails(tmp_path: Path) -> None:
    presence = driver_presence(*nvidia_tree(tmp_path, gpus=1))
    cpu_torch = Fingerprints(torch_version="2.3.1", torch_cuda=None)
    found = gpu_rules.torch_findings(cpu_torch, "", NO_NVML, presence)
    assert found[0].status == "FAIL" and "CPU build" in found[0].evidence
    assert gpu_rules.torch_findings(cpu_torch, "", NO_NVML, DriverPresence())[0].status == "PASS"


@pytest.mark.parametrize(
    ("arch", "kind"),
    [
        (("sm_80", "sm_90a"), "native"),
        (("sm_90a",), "native"),
        (("sm_80", "compute_90a"), "ptx"),
        (("sm_80",), "none"),
    ],
)
def test_arch_entries_with_suffixes(arch: tuple[str, ...], kind: str) -> None:
    assert gpu_rules._arch_ok("sm_90", arch) == kind


def cpus(usable: int, quota: float | None = None) -> CpuInfo:
    return CpuInfo(logical=64, affinity=64, physical=usable, quota=quota, usable=usable)


def test_workers_per_rank() -> None:
    assert host.recommended_workers(cpus(16), 1) == 15
    assert host.recommended_workers(cpus(16), 4) == 3  # Lightning: cpu_count // local_world_size - 1
    assert host.recommended_workers(cpus(2), 2) == 0
    assert host.ranks_per_node({"LOCAL_WORLD_SIZE": "4"}, 8) == (4, "LOCAL_WORLD_SIZE")
    assert host.ranks_per_node({}, 8) == (8, "one rank per visible GPU")
    assert host.ranks_per_node({}, 0) == (1, "one process")
    assert host.visible_gpu_count({"CUDA_VISIBLE_DEVICES": "0,1"}, 8) == 2
    assert (
        host.visible_gpu_count({"CUDA_VISIBLE_DEVICES": "MIG-8b3e4c1a-1111-2222-3333-444455556666"}, 1) == 1
    )
    assert host.visible_gpu_count({"CUDA_VISIBLE_DEVICES": "0,-1,2"}, 8) == 1
    found = host_rules.cpu_findings(cpus(16), ranks=4, ranks_source="LOCAL_WORLD_SIZE")
    advice = found[-1]
    assert (
        "num_workers=3" in advice.evidence
        and "4 ranks" in advice.evidence
        and "LOCAL_WORLD_SIZE" in advice.evidence
    )


def test_fractional_quota_is_floored(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    (root / "job").mkdir(parents=True)
    (root / "job" / "cpu.max").write_text("150000 100000\n")
    proc = tmp_path / "cgroup_of_self"
    proc.write_text("0::/job\n")
    info = host.cpu_info(root, proc)
    assert info.quota == pytest.approx(1.5) and info.usable == 1


def test_virtio_disk_with_the_rotational_flag_is_judged_by_latency(tmp_path: Path) -> None:
    """Cloud VMs' virtio disks say rotational=1; a measured read latency decides (real files, real reads)."""
    for i in range(8):
        (tmp_path / f"{i}.bin").write_bytes(bytes([i]) * 131072)
    latency = coldread.measure(tmp_path)
    assert latency.samples == 8 and 0 < latency.median_ms < 1000
    virtio = DiskInfo(
        path=str(tmp_path),
        mount_point="/",
        fstype="ext4",
        source="/dev/vda1",
        rotational=True,
        files=8,
        bytes=8 * 131072,
        truncated=False,
    )
    shm = ShmInfo(path="/dev/shm", exists=True, total=2**20, free=2**20)
    fast = coldread.Latency(samples=8, median_ms=0.21, cold=True)
    found = host_rules.disk_findings(virtio, shm, fast)[0]
    assert found.status == "PASS" and "0.21 ms" in found.evidence and "HDD" not in found.evidence
    slow = coldread.Latency(samples=8, median_ms=9.5, cold=True)
    found = host_rules.disk_findings(virtio, shm, slow)[0]
    assert found.status == "WARN" and "9.5 ms" in found.evidence and "SSD" in found.fix
