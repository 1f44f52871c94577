"""Where a data folder lives: its mount, filesystem type, block device and whether that disk is rotational."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

MOUNTINFO = Path("/proc/self/mountinfo")
SYS_DEV_BLOCK = Path("/sys/dev/block")
NETWORK_FS = frozenset(
    {
        "nfs",
        "nfs4",
        "cifs",
        "smb3",
        "smbfs",
        "lustre",
        "gpfs",
        "beegfs",
        "ceph",
        "glusterfs",
        "9p",
        "afs",
        "sshfs",
        "fuse.sshfs",
        "fuse.s3fs",
        "fuse.gcsfuse",
        "fuse.rclone",
        "fuse.juicefs",
    }
)
MEMORY_FS = frozenset({"tmpfs", "ramfs"})
SCAN_LIMIT = 200_000


@dataclass(frozen=True, slots=True)
class DiskInfo:
    """The data folder's storage. rotational is None where the kernel does not say (overlay, network,
    macOS)."""

    path: str
    mount_point: str
    fstype: str
    source: str
    rotational: bool | None
    files: int
    bytes: int
    truncated: bool

    @property
    def network(self) -> bool:
        return self.fstype in NETWORK_FS or (self.fstype.startswith("fuse.") and self.fstype != "fuse.lxcfs")

    @property
    def in_memory(self) -> bool:
        return self.fstype in MEMORY_FS


def _unescape(field: str) -> str:
    """mountinfo escapes space, tab, newline and backslash as octal."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def mount_of(path: Path, mountinfo: Path = MOUNTINFO) -> tuple[str, str, str]:
    """(mount point, filesystem type, source) of the mount holding `path`; the last of stacked mounts wins."""
    real = os.path.realpath(path)
    best = ("/", "unknown", "")
    try:
        lines = mountinfo.read_text().splitlines()
    except OSError:
        return best
    for line in lines:
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if not sep or len(fields) < 5 or len(tail) < 2:
            continue
        point = _unescape(fields[4])
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best[0]):
            best = (point, tail[0], _unescape(tail[1]))
    return best


def rotational(path: Path, sys_dev_block: Path = SYS_DEV_BLOCK) -> bool | None:
    """Whether the disk under `path` spins: st_dev -> /sys/dev/block/MAJ:MIN -> (parent disk) ->
    queue/rotational."""
    try:
        device = os.stat(path).st_dev
    except OSError:
        return None
    node = sys_dev_block / f"{os.major(device)}:{os.minor(device)}"
    try:
        folder = node.resolve(strict=True)
    except OSError:
        return None
    if (folder / "partition").exists():
        folder = folder.parent
    # device-mapper/md devices (LVM, LUKS, RAID) carry the flag of their member disks under slaves/
    members = sorted((folder / "slaves").glob("*")) if (folder / "slaves").is_dir() else []
    flags = [_flag(m.resolve()) for m in members] or [_flag(folder)]
    known = [f for f in flags if f is not None]
    return any(known) if known else None


def _flag(disk: Path) -> bool | None:
    try:
        return (disk / "queue" / "rotational").read_text().strip() == "1"
    except OSError:
        return None


def scan(path: Path, limit: int = SCAN_LIMIT) -> tuple[int, int, bool]:
    """(files, bytes, truncated): a bounded walk so a huge dataset does not stall the doctor."""
    files = total = 0
    for folder, _dirs, names in os.walk(path):
        for name in names:
            try:
                total += os.stat(os.path.join(folder, name)).st_size
            except OSError:
                continue
            files += 1
            if files >= limit:
                return files, total, True
    return files, total, False


def disk_info(path: Path, mountinfo: Path = MOUNTINFO, sys_dev_block: Path = SYS_DEV_BLOCK) -> DiskInfo:
    """Everything doctor reports about a data folder."""
    point, fstype, source = mount_of(path, mountinfo)
    files, total, truncated = scan(path)
    return DiskInfo(
        path=str(path),
        mount_point=point,
        fstype=fstype,
        source=source,
        rotational=rotational(path, sys_dev_block),
        files=files,
        bytes=total,
        truncated=truncated,
    )
