"""Host probes: cgroup CPU quota (v1, v2), physical cores, memory, /dev/shm, mounts and rotational disks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from envguard.machine import disk, host


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_cgroup_v2_quota_takes_the_tightest_ancestor(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    proc = write(tmp_path / "proc_cgroup", "0::/kubepods/pod1/ctr\n")
    write(root / "kubepods" / "cpu.max", "max 100000\n")
    write(root / "kubepods" / "pod1" / "cpu.max", "400000 100000\n")
    write(root / "kubepods" / "pod1" / "ctr" / "cpu.max", "150000 100000\n")
    assert host.cgroup_cpu_quota(root, proc) == pytest.approx(1.5)


def test_cgroup_v1_quota_and_unlimited(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    proc = write(tmp_path / "proc_cgroup", "4:memory:/job\n3:cpu,cpuacct:/job\n0::/\n")
    write(root / "cpu,cpuacct" / "job" / "cpu.cfs_quota_us", "250000\n")
    write(root / "cpu,cpuacct" / "job" / "cpu.cfs_period_us", "100000\n")
    assert host.cgroup_cpu_quota(root, proc) == pytest.approx(2.5)
    write(root / "cpu,cpuacct" / "job" / "cpu.cfs_quota_us", "-1\n")
    assert host.cgroup_cpu_quota(root, proc) is None
    assert host.cgroup_cpu_quota(tmp_path / "missing", tmp_path / "missing") is None


def test_cpu_info_caps_usable_by_the_quota(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    proc = write(tmp_path / "proc_cgroup", "0::/\n")
    write(root / "cpu.max", "50000 100000\n")
    info = host.cpu_info(root, proc)
    assert info.quota == pytest.approx(0.5) and info.usable == 1 and info.physical == 1
    assert info.affinity == len(os.sched_getaffinity(0))


def test_physical_cores_from_topology(tmp_path: Path) -> None:
    for cpu, (package, core) in enumerate([(0, 0), (0, 0), (0, 1), (0, 1), (1, 0), (1, 0)]):
        write(tmp_path / f"cpu{cpu}" / "topology" / "physical_package_id", f"{package}\n")
        write(tmp_path / f"cpu{cpu}" / "topology" / "core_id", f"{core}\n")
    assert host.physical_cores(set(range(6)), tmp_path) == 3
    assert host.physical_cores({0, 1}, tmp_path) == 1  # two hyperthreads of one core
    assert host.physical_cores(set(host.affinity())) >= 1  # the real machine


def test_memory_info(tmp_path: Path) -> None:
    meminfo = write(
        tmp_path / "meminfo", "MemTotal:       16384000 kB\nMemFree: 1 kB\nMemAvailable:    8192000 kB\n"
    )
    proc = write(tmp_path / "proc_cgroup", "0::/job\n")
    write(tmp_path / "cg" / "job" / "memory.max", str(2 * 1024**3))
    info = host.memory_info(meminfo, tmp_path / "cg", proc)
    assert (
        info.total == 16384000 * 1024
        and info.available == 8192000 * 1024
        and info.cgroup_limit == 2 * 1024**3
    )
    real = host.memory_info()
    assert real.total and real.available


def test_oom_kills_are_summed_over_the_cgroup_levels_of_both_versions(tmp_path: Path) -> None:
    proc = write(tmp_path / "proc_cgroup", "4:memory:/slot\n0::/job\n")
    assert host.oom_kills(tmp_path / "cg", proc) is None  # no level says
    write(tmp_path / "cg" / "job" / "memory.events", "low 0\nhigh 0\nmax 3\noom 2\noom_kill 2\n")
    write(tmp_path / "cg" / "memory" / "slot" / "memory.oom_control", "oom_kill_disable 0\noom_kill 1\n")
    assert host.oom_kills(tmp_path / "cg", proc) == 3


def test_shm_path_override(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(host.SHM_ENV, str(tmp_path))
    info = host.shm_info()
    assert info.path == str(tmp_path) and info.exists and info.free > 0
    assert not host.shm_info(tmp_path / "absent").exists


def test_tiny_tmpfs_is_measured(tiny_tmpfs: Path) -> None:
    info = host.shm_info(tiny_tmpfs)
    assert info.total == 1024 * 1024
    assert disk.mount_of(tiny_tmpfs)[1] == "tmpfs"


MOUNTINFO = """\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw
40 27 0:50 / /data rw - nfs4 server:/export rw
41 40 0:51 / /data/my\\040set rw - tmpfs tmpfs rw
25 24 0:23 / /dev/shm rw - tmpfs tmpfs rw,size=10k
30 24 0:27 / /dev/shm rw - tmpfs tmpfs rw,size=24684092k
"""


def test_mount_of_picks_the_longest_and_last_mount(tmp_path: Path) -> None:
    info = write(tmp_path / "mountinfo", MOUNTINFO)
    assert disk.mount_of(Path("/data/train/x.jpg"), info) == ("/data", "nfs4", "server:/export")
    assert disk.mount_of(Path("/data/my set/a"), info)[1] == "tmpfs"
    assert disk.mount_of(Path("/home/u"), info) == ("/", "ext4", "/dev/vda")
    assert disk.mount_of(Path("/dev/shm"), info) == ("/dev/shm", "tmpfs", "tmpfs")


def test_rotational_resolves_partitions_and_members(tmp_path: Path) -> None:
    devices = tmp_path / "devices"
    write(devices / "sda" / "queue" / "rotational", "1\n")
    write(devices / "sda" / "sda1" / "partition", "1\n")
    write(devices / "nvme0n1" / "queue" / "rotational", "0\n")
    write(devices / "dm-0" / "queue" / "rotational", "0\n")
    (devices / "dm-0" / "slaves").mkdir()
    (devices / "dm-0" / "slaves" / "sda").symlink_to(devices / "sda")
    block = tmp_path / "dev_block"
    block.mkdir()
    here = os.stat(tmp_path).st_dev
    node = block / f"{os.major(here)}:{os.minor(here)}"
    for target, spins in (
        (devices / "sda" / "sda1", True),
        (devices / "nvme0n1", False),
        (devices / "dm-0", True),
    ):
        if node.is_symlink():
            node.unlink()
        node.symlink_to(target)
        assert disk.rotational(tmp_path, block) is spins
    node.unlink()
    assert disk.rotational(tmp_path, block) is None


def test_disk_info_scans_the_folder(tmp_path: Path) -> None:
    for i in range(5):
        write(tmp_path / "d" / f"{i}.bin", "x" * (i + 1))
    info = disk.disk_info(tmp_path / "d")
    assert (info.files, info.bytes, info.truncated) == (5, 15, False)
    assert info.fstype != "unknown" and not info.network
    files, _size, truncated = disk.scan(tmp_path / "d", limit=2)
    assert files == 2 and truncated


def test_open_files_limit() -> None:
    soft, hard = host.open_files_limit()
    assert soft is None or soft > 0
    assert hard is None or soft is None or hard >= soft
