"""Judge the gathered ranks (pure; the same on every rank): environments alike, DistributedSampler shards
that partition the dataset, DataLoaders that deliver their sampler's shard."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from envguard.distributed.records import Rank, RankFailure, RankReport
from envguard.distributed.result import DistributedResult, ShardCheck
from envguard.findings import Finding
from envguard.model import FINGERPRINT_FIELDS

CATEGORY_ENV, CATEGORY_SHARDS = "environment across ranks", "DistributedSampler shards"


def check_shards(reports: Sequence[RankReport]) -> list[ShardCheck]:
    """Per epoch: the union of all ranks' shards against range(size), padding counted."""
    size, world = reports[0].dataset_size, len(reports)
    padding = math.ceil(size / world) * world - size
    checks: list[ShardCheck] = []
    for epoch in range(min(len(r.shards) for r in reports)):
        shards = [r.shards[epoch].indices for r in reports]
        counts = Counter(i for shard in shards for i in shard)
        checks.append(
            ShardCheck(
                epoch=epoch,
                dataset_size=size,
                world_size=world,
                padding=padding,
                shard_sizes=tuple(len(s) for s in shards),
                missing=sum(1 for i in range(size) if i not in counts),
                repeated=sum(c - 1 for i, c in counts.items() if 0 <= i < size and c > 1),
                out_of_range=sum(c for i, c in counts.items() if not 0 <= i < size),
            )
        )
    return checks


def _package_changes(reference: Sequence[str], other: Sequence[str]) -> str:
    def table(items: Sequence[str]) -> dict[str, str]:
        return {item.split("=", 1)[0]: item.split("=", 1)[1] for item in items}

    ref, oth = table(reference), table(other)
    changed = [f"{n} {ref[n]} -> {oth[n]}" for n in sorted(ref.keys() & oth.keys()) if ref[n] != oth[n]]
    changed += [f"{n} only on rank 0" for n in sorted(ref.keys() - oth.keys())]
    changed += [f"{n} missing on rank 0" for n in sorted(oth.keys() - ref.keys())]
    shown = "; ".join(changed[:5]) + (f"; and {len(changed) - 5} more" if len(changed) > 5 else "")
    return shown or "same packages"


def _streams(ref: RankReport, other: RankReport) -> list[str]:
    """The fingerprint fields (seeded streams, versions) in which two ranks differ (unprobed: all None)."""
    return [
        name
        for name in FINGERPRINT_FIELDS
        if getattr(other.fingerprints, name, None) != getattr(ref.fingerprints, name, None)
    ]


def environment_findings(reports: Sequence[RankReport]) -> list[Finding]:
    """Ranks whose environment (packages, streams) or system (driver, glibc) differs from rank 0's."""
    ref = reports[0]
    out: list[Finding] = []
    for r in reports[1:]:
        where = f"rank {r.rank} on {r.host}"
        if r.env_sha256 != ref.env_sha256:
            streams = _streams(ref, r)
            detail = _package_changes(ref.packages, r.packages) + (
                f"; streams differ: {', '.join(streams)}" if streams else ""
            )
            out.append(
                Finding(
                    CATEGORY_ENV,
                    where,
                    "FAIL",
                    f"environment differs from rank 0 on {ref.host}: {detail}",
                    "build every node from the same lock: `envguard create LOCK` on each host, then rerun",
                )
            )
        if r.system != ref.system:
            diff = sorted(set(r.system) ^ set(ref.system))
            out.append(
                Finding(
                    CATEGORY_ENV,
                    f"{where} (system)",
                    "WARN",
                    f"virtual packages differ: {', '.join(diff)}",
                    "align drivers and OS images across nodes, or check that the lock allows both",
                )
            )
    if not out:
        out.append(
            Finding(
                CATEGORY_ENV,
                f"{len(reports)} ranks",
                "PASS",
                f"every rank has environment {ref.env_sha256[:12]} ({len(ref.packages)} packages)",
            )
        )
    return out


def _partition_findings(reports: Sequence[RankReport]) -> list[Finding]:
    out: list[Finding] = []
    for check in check_shards(reports):
        label = f"epoch {check.epoch}"
        evidence = (
            f"{check.world_size} shards of {'/'.join(map(str, check.shard_sizes))} cover "
            f"{check.dataset_size} samples; "
            f"{check.repeated} repeated (padding {check.padding}), {check.missing} missing"
        )
        if check.partition:
            out.append(Finding(CATEGORY_SHARDS, label, "PASS", evidence))
        else:
            out.append(
                Finding(
                    CATEGORY_SHARDS,
                    label,
                    "FAIL",
                    evidence,
                    "build DistributedSampler with the real world size and each rank's own rank, the same "
                    "seed and dataset everywhere, and call set_epoch(epoch) every epoch",
                )
            )
    return out


def shard_findings(reports: Sequence[RankReport]) -> list[Finding]:
    """One dataset size and seed everywhere; per epoch, shards that partition the dataset; DataLoaders that
    deliver their sampler's shard."""
    sizes, seeds = {r.dataset_size for r in reports}, {r.seed for r in reports}
    if len(sizes) > 1:
        by_rank = ", ".join(f"rank {r.rank}: {r.dataset_size}" for r in reports)
        return [
            Finding(
                CATEGORY_SHARDS,
                "dataset size",
                "FAIL",
                f"ranks see different dataset sizes ({by_rank})",
                "every rank must index the same data: sync the data folder (or its file list) across hosts",
            )
        ]
    if len(seeds) > 1:
        return [
            Finding(
                CATEGORY_SHARDS,
                "sampler seed",
                "FAIL",
                f"ranks use different seeds {sorted(seeds)}",
                "pass the same seed to DistributedSampler on every rank",
            )
        ]
    out = _partition_findings(reports)
    for r in reports:
        bad = [s.epoch for s in r.shards if s.loader_sha256 is not None and s.loader_sha256 != s.sha256]
        if bad:
            out.append(
                Finding(
                    CATEGORY_SHARDS,
                    f"rank {r.rank} DataLoader",
                    "FAIL",
                    f"the DataLoader does not deliver the sampler's shard (epochs {bad})",
                    "pass the DistributedSampler as sampler= and do not also set shuffle=True",
                )
            )
    return out


def analyze(reports: Sequence[Rank], rank: int = 0) -> DistributedResult:
    """Judge the gathered reports (pure; the same on every rank)."""
    ordered = sorted(reports, key=lambda r: r.rank)
    failed = [r for r in ordered if isinstance(r, RankFailure)]
    findings = [
        Finding(
            CATEGORY_ENV,
            f"rank {r.rank} on {r.host}",
            "FAIL",
            r.error,
            "fix that rank's environment or arguments and rerun",
        )
        for r in failed
    ]
    usable = [r for r in ordered if isinstance(r, RankReport)]
    checks: list[ShardCheck] = []
    if usable and not failed:
        findings += environment_findings(usable) + shard_findings(usable)
        if len({r.dataset_size for r in usable}) == 1:
            checks = check_shards(usable)
    return DistributedResult(
        rank=rank,
        world_size=len(ordered),
        ranks=tuple(ordered),
        shards=tuple(checks),
        findings=tuple(findings),
    )
