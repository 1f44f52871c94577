"""Verdicts of `--data DIR`'s storage test (pure): read speed cold vs warm, the disk by measured latency, the
dataset against the page cache, and what decoding costs."""

from __future__ import annotations

from envguard.findings import Finding, Status
from envguard.machine.coldread import HDD_MS
from envguard.output import human_bytes
from envguard.smoke.rates import LOADER_FLOOR_MS
from envguard.smoke.readpasses import MIN_FIGURE_FILES, Pass, StorageResult
from envguard.smoke.report import DatasetResult, Recommendation

CATEGORY = "storage"
NVME_MS = 0.3  # a cold first read faster than this: NVMe-class (or a VM disk the host caches)
SSD_MS = 1.5
TIGHT = 0.5  # a dataset above this share of the available RAM fits in the page cache only just
OTHERS_SHARE = 0.2  # other processes reading more than this share of our cold bytes: contention
IOWAIT = 0.1  # the host in iowait this share of the time: contention


def _rate(p: Pass) -> str:
    return f"{p.mb_per_s:.1f} MB/s = {p.files_per_s:.0f} files/s"


def read_speed(result: StorageResult) -> Finding:
    seq, rnd, warm = (
        result.pass_for("sequential", True),
        result.pass_for("random", True),
        result.pass_for("sequential", False),
    )
    parts = []
    how = {"fadvise": "posix_fadvise(DONTNEED)", "o_direct": "O_DIRECT"}.get(result.method, "")
    if seq and rnd:
        label = f"cold (page cache dropped per file with {how})" if result.dropped else "not cold"
        parts.append(f"{label}: sequential {_rate(seq)}, random {_rate(rnd)}")
    if warm:
        parts.append(f"warm (page cache): {_rate(warm)}")
    sample = seq or warm
    tail = f" over {sample.files} files, {human_bytes(sample.bytes)} per pass" if sample else ""
    evidence = "; ".join(parts) + tail
    if not result.dropped:
        evidence += (
            f"; the cold passes were served from memory ({result.fstype}"
            + (", posix_fadvise unavailable" if result.method == "none" else ", the drop did not take")
            + "): the figures are warm"
        )
    wanted = min(MIN_FIGURE_FILES, result.files_total)
    if rnd is not None and rnd.files < wanted:
        evidence += (
            f"; the random cold pass read {rnd.files} of {result.files_total} files in its time: too few to "
            "be a figure (a larger --budget reads more)"
        )
    busy = _contention(result)
    return Finding(
        CATEGORY,
        "read speed cold vs warm",
        "WARN" if busy else "INFO",
        evidence + busy,
        "rerun when the disk is quiet: these cold figures are lower bounds" if busy else "",
    )


def _contention(result: StorageResult) -> str:
    """'' on a quiet disk; else what else used it while the cold passes ran (other processes' reads,
    iowait)."""
    busy = result.contention
    if busy is None:
        return ""
    own = sum(p.bytes for p in result.passes if p.cold)
    others = busy.others_read_bytes or 0
    words = []
    if others > max(OTHERS_SHARE * own, 1e6):
        words.append(f"other processes read {human_bytes(others)} ({busy.others_mb_per_s or 0:.1f} MB/s)")
    if busy.iowait is not None and busy.iowait >= IOWAIT:
        words.append(f"iowait {busy.iowait:.0%}")
    if not words:
        return ""
    return f"; measured under contention over {busy.seconds:.1f} s: {', '.join(words)}"


def disk_class(result: StorageResult) -> Finding:
    """HDD-like or SSD-like from the measured cold latency; the kernel's rotational flag is not trusted."""
    where = f"{result.fstype} at {result.mount_point}"
    ms = result.cold_latency_ms()
    if not result.dropped or ms is None:
        return Finding(
            CATEGORY, "disk latency", "INFO", f"not measured cold ({where}): the reads came from memory"
        )
    if ms < NVME_MS:
        kind = "NVMe-like (or a VM disk the host caches)"
    elif ms < SSD_MS:
        kind = "SSD-like"
    elif ms < HDD_MS:
        kind = "a slow SSD or a network disk"
    else:
        kind = "HDD-like or remote"
    evidence = f"median cold read {ms:.3f} ms per file (random order, {where}): {kind}"
    if result.network:
        evidence += "; a network filesystem"
    if ms >= HDD_MS or result.network:
        return Finding(
            CATEGORY,
            "disk latency",
            "WARN",
            evidence,
            "each worker waits this long per file: use more workers than CPUs (I/O-bound), copy the data to "
            "a local SSD, or pack it into large shards (WebDataset, TFRecord) read sequentially",
        )
    return Finding(CATEGORY, "disk latency", "PASS", evidence)


def page_cache(result: StorageResult, available: int | None = None) -> Finding:
    """Would the dataset stay in the page cache after epoch 1? (`available` defaults to the measured
    one.)"""
    room = available if available is not None else result.memory_available
    size = f"{'at least ' if result.truncated else ''}{human_bytes(result.bytes_total)}"
    size += f" ({result.files_total} files)"
    cold = result.pass_for("random", True)
    cold_rate = f"random cold {_rate(cold)}" if cold and result.dropped else "an unmeasured cold rate"
    warm = result.pass_for("sequential", False)
    warm_rate = f"warm {_rate(warm)}" if warm else "the warm rate"
    if not room:
        return Finding(CATEGORY, "fits in the page cache", "INFO", f"dataset {size}; available RAM unknown")
    ram = f"{human_bytes(room)} available"
    if result.memory_total:
        ram += f" of {human_bytes(result.memory_total)}"
    if result.bytes_total > room:
        return Finding(
            CATEGORY,
            "fits in the page cache",
            "WARN",
            f"dataset {size} is larger than the RAM the page cache can use ({ram}): every epoch reads "
            f"from the disk at {cold_rate}",
            "size num_workers for the cold rate, copy the data to a faster local disk, or pack it into "
            "shards read sequentially",
        )
    tight = result.bytes_total > TIGHT * room
    status: Status = "INFO" if tight else "PASS"
    evidence = (
        f"dataset {size} fits in the page cache ({ram}): epoch 1 reads at {cold_rate}, later epochs at "
        f"{warm_rate}"
    )
    if tight:
        evidence += "; only just: other processes' memory will push part of it out"
    return Finding(CATEGORY, "fits in the page cache", status, evidence)


def decode(dataset: DatasetResult | None, rec: Recommendation | None, skipped: str | None) -> list[Finding]:
    """What decoding each file costs and the num_workers that keeps up (`--decode image`)."""
    if skipped:
        return [Finding(CATEGORY, "decode", "INFO", f"--decode skipped: {skipped}")]
    if dataset is None or dataset.latency_ms is None or dataset.cpu_ms is None:
        return []
    share = min(1.0, dataset.cpu_ms / dataset.latency_ms) if dataset.latency_ms > 0 else 0.0
    kind = "CPU-bound (decoding)" if dataset.bound == "cpu" else "I/O-bound (reading)"
    evidence = (
        f"each file costs {dataset.latency_ms:.2f} ms in a worker, {dataset.cpu_ms:.2f} ms of it CPU "
        f"({share:.0%}): {kind}"
    )
    if rec is not None:
        evidence += f"; num_workers={rec.workers} delivers {rec.samples_per_s:.0f} files/s"
    return [Finding(CATEGORY, "decode", "INFO", evidence)]


def floor_finding(dataset: DatasetResult) -> Finding:
    return Finding(
        f"throughput: {dataset.name}",
        "loader efficiency",
        "INFO",
        f"a file costs {dataset.latency_ms:.3f} ms to read, below the DataLoader's own overhead per sample "
        f"(~{LOADER_FLOOR_MS} ms): the data is not the bottleneck, so efficiency is not judged",
    )


def findings(
    result: StorageResult | None,
    dataset: DatasetResult | None,
    rec: Recommendation | None,
    decode_skipped: str | None,
    decoding: bool,
) -> list[Finding]:
    """The storage test's verdicts (none without --data), with decoding's under --decode."""
    if result is None:
        return []
    found = [read_speed(result), disk_class(result), page_cache(result)]
    if decoding:
        found += decode(dataset, rec, decode_skipped)
    return found
