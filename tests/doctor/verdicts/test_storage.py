"""Doctor's verdict on the data folder's storage over hand-built records: filesystem, disk kind, measured
read latency (which outranks the rotational flag), a dataset that fits in tmpfs."""

from __future__ import annotations

from envguard.doctor.verdicts.storage import disk_findings
from envguard.machine.coldread import Latency
from envguard.machine.disk import DiskInfo
from envguard.machine.host import ShmInfo

SHM = ShmInfo(path="/dev/shm", exists=True, total=2**32, free=2**32)


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
    assert disk_findings(data("ext4", True), SHM)[0].status == "WARN"
    assert "WebDataset" in disk_findings(data("ext4", True), SHM)[0].fix
    assert disk_findings(data("nfs4", None), SHM)[0].status == "WARN"
    assert disk_findings(data("ext4", False), SHM)[0].status == "PASS"
    small = disk_findings(data("ext4", False, size=2**20), SHM)[0]
    assert small.status == "INFO" and "fits in /dev/shm" in small.evidence
    assert disk_findings(data("ext4", False, files=0), SHM)[0].status == "WARN"
    assert disk_findings(None, SHM)[0].status == "INFO"


def test_virtio_disk_with_the_rotational_flag_is_judged_by_latency() -> None:
    """Cloud VMs' virtio disks say rotational=1; a measured read latency decides."""
    virtio = DiskInfo(
        path="/data",
        mount_point="/",
        fstype="ext4",
        source="/dev/vda1",
        rotational=True,
        files=8,
        bytes=8 * 131072,
        truncated=False,
    )
    shm = ShmInfo(path="/dev/shm", exists=True, total=2**20, free=2**20)
    found = disk_findings(virtio, shm, Latency(samples=8, median_ms=0.21, cold=True))[0]
    assert found.status == "PASS" and "0.21 ms" in found.evidence and "HDD" not in found.evidence
    found = disk_findings(virtio, shm, Latency(samples=8, median_ms=9.5, cold=True))[0]
    assert found.status == "WARN" and "9.5 ms" in found.evidence and "SSD" in found.fix
