"""The distributed check, under torchrun: every rank reports its environment fingerprint and its
DistributedSampler shards; the reports are gathered with torch.distributed (gloo, CPU) and every rank judges
the same data, so all ranks exit alike while only rank 0 prints.

    torchrun --standalone --nproc-per-node=2 -m envguard smoke --distributed
    torchrun --standalone --nproc-per-node=2 -m envguard check --distributed
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import socket
import struct
import sys
from collections import Counter
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from envguard.distributed.result import DistributedResult, ShardCheck
from envguard.errors import EnvguardError, UsageError
from envguard.findings import Finding
from envguard.model import FINGERPRINT_FIELDS
from envguard.output import Style

DEFAULT_SAMPLES = 1001  # odd on purpose: DistributedSampler pads, and the check counts the padding
CATEGORY_ENV, CATEGORY_SHARDS = "environment across ranks", "DistributedSampler shards"


def _digest_ints(values: Sequence[int]) -> str:
    return hashlib.sha256(struct.pack(f"<{len(values)}q", *values)).hexdigest()


def dataset_size(data_dir: Path | None, default: int = DEFAULT_SAMPLES) -> int:
    """Samples this rank sees: files under --data (what a folder dataset would index), else `default`."""
    if data_dir is None:
        return default
    return sum(len(names) for _folder, _dirs, names in os.walk(data_dir))


def environment_report(source: str | None, probe: bool) -> dict[str, Any]:
    """This rank's environment: packages, system (virtual packages) and seeded-stream fingerprints, hashed."""
    from envguard.sources import read_live, resolve_prefix

    prefix = resolve_prefix(source)
    env = read_live(prefix, probe=probe)
    packages = sorted(f"{p.manager}:{p.name}={p.version}={p.build}" for p in env.packages)
    prints = {k: getattr(env.fingerprints, k) for k in FINGERPRINT_FIELDS} if env.fingerprints else {}
    blob = json.dumps({"packages": packages, "fingerprints": prints}, sort_keys=True).encode()
    return {
        "prefix": str(prefix),
        "packages": packages,
        "fingerprints": prints,
        "system": sorted(f"{v.name}={v.version}" for v in env.virtual_packages),
        "env_sha256": hashlib.sha256(blob).hexdigest(),
    }


def shard_report(
    size: int, rank: int, world: int, *, seed: int, epochs: int, loader: bool
) -> list[dict[str, Any]]:
    """Per epoch, this rank's DistributedSampler indices (and, with `loader`, what a DataLoader delivers)."""
    from torch.utils.data import DataLoader, DistributedSampler

    sampler = DistributedSampler(range(size), num_replicas=world, rank=rank, shuffle=True, seed=seed)  # type: ignore[var-annotated,arg-type]
    out: list[dict[str, Any]] = []
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        indices = [int(i) for i in sampler]
        entry: dict[str, Any] = {"epoch": epoch, "indices": indices, "sha256": _digest_ints(indices)}
        if loader:
            batches = DataLoader(range(size), batch_size=16, sampler=sampler)  # type: ignore[arg-type,var-annotated]
            delivered = [int(i) for batch in batches for i in batch]
            entry["loader_sha256"] = _digest_ints(delivered)
        out.append(entry)
    return out


def rank_report(
    source: str | None,
    rank: int,
    world: int,
    *,
    data_dir: Path | None,
    seed: int,
    epochs: int,
    probe: bool,
    loader: bool,
) -> dict[str, Any]:
    """Everything this rank contributes; an error is reported, not raised, so the other ranks do not hang."""
    import torch

    report: dict[str, Any] = {
        "rank": rank,
        "host": socket.gethostname(),
        "torch": str(torch.__version__),
        "seed": seed,
        "python": ".".join(map(str, sys.version_info[:3])),
    }
    try:
        report.update(environment_report(source, probe))
        report["dataset_size"] = dataset_size(data_dir)
        report["shards"] = shard_report(
            report["dataset_size"], rank, world, seed=seed, epochs=epochs, loader=loader
        )
    except EnvguardError as exc:
        report["error"] = str(exc)
    return report


def check_shards(reports: Sequence[dict[str, Any]]) -> list[ShardCheck]:
    """Per epoch: the union of all ranks' shards against range(size), padding counted."""
    size, world = int(reports[0]["dataset_size"]), len(reports)
    padding = math.ceil(size / world) * world - size
    checks: list[ShardCheck] = []
    for epoch in range(min(len(r["shards"]) for r in reports)):
        shards = [r["shards"][epoch]["indices"] for r in reports]
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


def environment_findings(reports: Sequence[dict[str, Any]]) -> list[Finding]:
    """Ranks whose environment (packages, streams) or system (driver, glibc) differs from rank 0's."""
    ref = reports[0]
    out: list[Finding] = []
    for r in reports[1:]:
        where = f"rank {r['rank']} on {r['host']}"
        if r["env_sha256"] != ref["env_sha256"]:
            streams = [
                k for k in FINGERPRINT_FIELDS if r["fingerprints"].get(k) != ref["fingerprints"].get(k)
            ]
            detail = _package_changes(ref["packages"], r["packages"]) + (
                f"; streams differ: {', '.join(streams)}" if streams else ""
            )
            out.append(
                Finding(
                    CATEGORY_ENV,
                    where,
                    "FAIL",
                    f"environment differs from rank 0 on {ref['host']}: {detail}",
                    "build every node from the same lock: `envguard create LOCK` on each host, then rerun",
                )
            )
        if r["system"] != ref["system"]:
            diff = sorted(set(r["system"]) ^ set(ref["system"]))
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
                f"every rank has environment {ref['env_sha256'][:12]} ({len(ref['packages'])} packages)",
            )
        )
    return out


def shard_findings(reports: Sequence[dict[str, Any]]) -> list[Finding]:
    sizes, seeds = {r["dataset_size"] for r in reports}, {r["seed"] for r in reports}
    if len(sizes) > 1:
        by_rank = ", ".join(f"rank {r['rank']}: {r['dataset_size']}" for r in reports)
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
    for r in reports:
        bad = [s["epoch"] for s in r["shards"] if "loader_sha256" in s and s["loader_sha256"] != s["sha256"]]
        if bad:
            out.append(
                Finding(
                    CATEGORY_SHARDS,
                    f"rank {r['rank']} DataLoader",
                    "FAIL",
                    f"the DataLoader does not deliver the sampler's shard (epochs {bad})",
                    "pass the DistributedSampler as sampler= and do not also set shuffle=True",
                )
            )
    return out


def analyze(reports: Sequence[dict[str, Any]], rank: int = 0) -> DistributedResult:
    """Judge the gathered reports (pure; the same on every rank)."""
    ordered = sorted(reports, key=lambda r: r["rank"])
    failed = [r for r in ordered if "error" in r]
    findings = [
        Finding(
            CATEGORY_ENV,
            f"rank {r['rank']} on {r['host']}",
            "FAIL",
            r["error"],
            "fix that rank's environment or arguments and rerun",
        )
        for r in failed
    ]
    usable = [r for r in ordered if "error" not in r]
    checks: list[ShardCheck] = []
    if usable and not failed:
        findings += environment_findings(usable) + shard_findings(usable)
        if len({r["dataset_size"] for r in usable}) == 1:
            checks = check_shards(usable)
    summary = tuple({k: v for k, v in r.items() if k not in ("packages", "shards")} for r in ordered)
    return DistributedResult(
        rank=rank, world_size=len(ordered), ranks=summary, shards=tuple(checks), findings=tuple(findings)
    )


def run_distributed_check(
    source: str | None = None,
    *,
    data_dir: Path | None = None,
    seed: int = 0,
    epochs: int = 2,
    probe: bool = True,
    loader: bool = True,
    timeout_s: float = 300.0,
) -> DistributedResult:
    """Gather every rank's report over torch.distributed (gloo) and judge them; call on every rank."""
    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        raise UsageError(
            "--distributed runs under torchrun, e.g. "
            "`torchrun --standalone --nproc-per-node=2 -m envguard smoke --distributed`"
        )
    try:
        import torch.distributed as dist
    except ImportError as exc:
        raise UsageError(
            "--distributed needs torch in envguard's own environment (pip install torch)"
        ) from exc
    owned = not dist.is_initialized()
    if owned:
        dist.init_process_group("gloo", timeout=timedelta(seconds=timeout_s))
    try:
        rank, world = dist.get_rank(), dist.get_world_size()
        mine = rank_report(
            source, rank, world, data_dir=data_dir, seed=seed, epochs=epochs, probe=probe, loader=loader
        )
        gathered: list[Any] = [None] * world
        dist.all_gather_object(gathered, mine)
    finally:
        if owned:
            dist.destroy_process_group()
    return analyze(gathered, rank)


def report_distributed(
    source: str | None, *, data_dir: Path | None, seed: int, style: Style, output: str | None, title: str
) -> int:
    """Run the distributed check on this rank; rank 0 writes the report. The same exit code on every rank."""
    from envguard.distributed import render
    from envguard.findings import exit_code, markdown
    from envguard.output import Views, present

    result = run_distributed_check(source, data_dir=data_dir, seed=seed)
    if result.rank == 0:
        views = Views(
            lambda: render.to_dict(result),
            lambda: render.render(result, title),
            lambda: markdown(result.findings),
        )
        present(views, style, output)
    return exit_code(result.findings)
