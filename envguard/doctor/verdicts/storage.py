"""Doctor's verdict on the data folder's storage (pure): network filesystems, slow random reads, a dataset
that fits in tmpfs."""

from __future__ import annotations

from envguard.findings import Finding, Status
from envguard.machine.coldread import HDD_MS, Latency
from envguard.machine.disk import DiskInfo
from envguard.machine.host import ShmInfo
from envguard.output import human_bytes


def disk_findings(disk: DiskInfo | None, shm: ShmInfo, latency: Latency | None = None) -> list[Finding]:
    """The data folder's storage, judged by measured read latency where there is one (the rotational flag lies
    on VMs: virtio disks often say 1)."""
    if disk is None:
        return [
            Finding("data", "data folder", "INFO", "not checked", "pass --data DIR to check your data's disk")
        ]
    size = f"{disk.files}{'+' if disk.truncated else ''} files, {human_bytes(disk.bytes)}"
    measured = latency is not None and latency.samples > 0
    slow = latency.median_ms >= HDD_MS if latency is not None and measured else disk.rotational
    if measured and latency is not None:
        heat = "cold" if latency.cold else "possibly cached"
        flag = {True: "1", False: "0", None: "unknown"}[disk.rotational]
        kind = (
            f"a {heat} 128 KiB read takes {latency.median_ms:g} ms (median of {latency.samples}; "
            f"rotational flag {flag}): {'HDD-like' if slow else 'SSD-like'}"
        )
    else:
        kind = {True: "rotational disk (HDD)", False: "SSD/NVMe", None: "disk type unknown"}[disk.rotational]
    evidence = (
        f"{disk.path}: {size} on {disk.fstype} ({disk.source or 'no device'}, mounted at "
        f"{disk.mount_point}), {kind}"
    )
    fits = shm.exists and not disk.in_memory and 0 < disk.bytes < shm.free // 2
    tip = f"; it fits in {shm.path}: copying it there (tmpfs) removes disk reads" if fits else ""
    if disk.files == 0:
        return [Finding("data", "data folder", "WARN", evidence, "the folder is empty: check the path")]
    if disk.network:
        return [
            Finding(
                "data",
                "data folder",
                "WARN",
                evidence + ": a network filesystem",
                "copy the data to local disk first, or use more workers (I/O-bound) and sharded formats"
                + tip,
            )
        ]
    if slow:
        return [
            Finding(
                "data",
                "data folder",
                "WARN",
                evidence + ": random reads are slow on this disk",
                "move it to an SSD, or store it sequentially (tar shards, WebDataset) and read in order"
                + tip,
            )
        ]
    status: Status = "INFO" if fits else "PASS"
    return [
        Finding(
            "data",
            "data folder",
            status,
            evidence + tip,
            "copy to tmpfs for I/O-bound training" if fits else "",
        )
    ]
