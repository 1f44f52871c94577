"""Judge the gathered ranks (pure; every rank reaches the same statuses): environments, locks and systems
against the majority's, DistributedSampler shards that partition the dataset, DataLoaders that deliver their
sampler's shard.

Ranks are compared by digest and grouped: a fleet of 8,000 ranks with one odd node is one finding naming its
eight ranks, not 8,000 rows. Only rank 0 holds the package lists (`details`) of the ranks it asked
(`detail_senders`), so only its findings name the packages that differ; every rank's statuses are the same.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TypeVar

from envguard.distributed.records import EnvDetail, LockSeen, Rank, RankFailure, RankReport
from envguard.distributed.result import DistributedResult, ShardCheck, Wire
from envguard.findings import Finding
from envguard.model import FINGERPRINT_FIELDS

CATEGORY_ENV, CATEGORY_LOCK = "environment across ranks", "lock across ranks"
CATEGORY_AGAINST = "environment against the lock"
CATEGORY_SHARDS = "DistributedSampler shards"
MAX_DETAILED = 8  # differing environments whose package lists rank 0 asks for (the largest groups first)
SHOWN = 5  # hosts named before "and N more hosts"

R = TypeVar("R", bound=RankReport | RankFailure)


def groups(ranks: Sequence[R], key: Callable[[R], Hashable]) -> list[list[R]]:
    """Ranks grouped by `key`, by rank within a group; the largest group first (a tie: the group holding the
    lowest rank), so groups[0][0] is the majority's reference rank."""
    by_key: dict[Hashable, list[R]] = {}
    for rank in sorted(ranks, key=lambda r: r.rank):
        by_key.setdefault(key(rank), []).append(rank)
    return sorted(by_key.values(), key=lambda group: (-len(group), group[0].rank))


def detail_senders(reports: Sequence[Rank]) -> tuple[int, ...]:
    """The ranks that send rank 0 their package list: none when every environment is alike, else the
    majority's reference rank and the first rank of each of the MAX_DETAILED largest other groups."""
    found = groups([r for r in reports if isinstance(r, RankReport)], lambda r: r.env_sha256)
    if len(found) < 2:
        return ()
    return tuple(sorted(group[0].rank for group in found[: MAX_DETAILED + 1]))


def spans(numbers: Sequence[int]) -> str:
    """`0-7, 9, 12-13` for [0..7, 9, 12, 13]."""
    out: list[str] = []
    ordered = sorted(numbers)
    start = previous = ordered[0]
    for number in [*ordered[1:], None]:
        if number is not None and number == previous + 1:
            previous = number
            continue
        out.append(str(start) if start == previous else f"{start}-{previous}")
        if number is not None:
            start = previous = number
    return ", ".join(out)


def which_ranks(ranks: Sequence[Rank]) -> str:
    """`rank 1`, or `ranks 8-15, 24`."""
    return f"rank {ranks[0].rank}" if len(ranks) == 1 else f"ranks {spans([r.rank for r in ranks])}"


def name_ranks(ranks: Sequence[Rank]) -> str:
    """`rank 1 on node1`, or `ranks 8-15 on node1, node2` (hosts named up to SHOWN, then counted)."""
    hosts = list(dict.fromkeys(r.host for r in ranks))
    shown = ", ".join(hosts[:SHOWN]) + (f" and {len(hosts) - SHOWN} more hosts" if len(hosts) > SHOWN else "")
    return f"{which_ranks(ranks)} on {shown}"


def _majority(group: Sequence[Rank], total: int) -> str:
    return f"rank {group[0].rank} on {group[0].host}'s ({len(group)} of {total} ranks)"


def _package_changes(reference: EnvDetail, other: EnvDetail) -> str:
    def table(items: Sequence[str]) -> dict[str, str]:
        return {item.split("=", 1)[0]: item.split("=", 1)[1] for item in items}

    ref, oth = table(reference.packages), table(other.packages)
    where = f"rank {reference.rank}"
    changed = [f"{n} {ref[n]} -> {oth[n]}" for n in sorted(ref.keys() & oth.keys()) if ref[n] != oth[n]]
    changed += [f"{n} only on {where}" for n in sorted(ref.keys() - oth.keys())]
    changed += [f"{n} missing on {where}" for n in sorted(oth.keys() - ref.keys())]
    shown = "; ".join(changed[:5]) + (f"; and {len(changed) - 5} more" if len(changed) > 5 else "")
    streams = [
        name
        for name in FINGERPRINT_FIELDS
        if getattr(other.fingerprints, name, None) != getattr(reference.fingerprints, name, None)
    ]
    return (shown or "same packages") + (f"; streams differ: {', '.join(streams)}" if streams else "")


def environment_findings(
    reports: Sequence[RankReport], details: Mapping[int, EnvDetail] | None = None
) -> list[Finding]:
    """Each group of ranks whose environment (packages, streams) differs from the majority's, with the
    packages that differ where rank 0 holds both lists."""
    found, details = groups(reports, lambda r: r.env_sha256), details or {}
    major = found[0]
    if len(found) == 1:
        return [
            Finding(
                CATEGORY_ENV,
                f"{len(reports)} ranks",
                "PASS",
                f"every rank has environment {major[0].env_sha256[:12]} ({major[0].packages} packages)",
            )
        ]
    out: list[Finding] = []
    for group in found[1:]:
        mine, theirs = details.get(group[0].rank), details.get(major[0].rank)
        if mine is not None and theirs is not None:
            detail = _package_changes(theirs, mine)
        else:
            detail = f"{group[0].env_sha256[:12]} vs {major[0].env_sha256[:12]} (package lists not compared)"
        out.append(
            Finding(
                CATEGORY_ENV,
                name_ranks(group),
                "FAIL",
                f"environment differs from {_majority(major, len(reports))}: {detail}",
                sync_advice(group, major[0].lock),
            )
        )
    return out


def _lock_text(lock: LockSeen | None) -> str:
    if lock is None:
        return "no lock"
    digest = lock.sha256[:12] if lock.sha256 else "unreadable there"
    return f"{lock.path} ({lock.how}, {digest})"


def lock_findings(reports: Sequence[RankReport]) -> list[Finding]:
    """Ranks that follow another lock (by content) than the majority's, named; one PASS when all agree on
    one; nothing when no rank follows a lock."""
    found = groups(reports, lambda r: r.lock.sha256 if r.lock is not None else None)
    major = found[0]
    if len(found) == 1:
        if major[0].lock is None:
            return []
        return [
            Finding(
                CATEGORY_LOCK,
                f"{len(reports)} ranks",
                "PASS",
                f"every rank follows {_lock_text(major[0].lock)}",
            )
        ]
    return [
        Finding(
            CATEGORY_LOCK,
            name_ranks(group),
            "FAIL",
            f"follow {_lock_text(group[0].lock)}, not {_majority(major, len(reports))} "
            f"{_lock_text(major[0].lock)}",
            "give every rank the same lock: pass --lock FILE from a shared filesystem, or copy the one lock "
            "to every node",
        )
        for group in found[1:]
    ]


def sync_advice(ranks: Sequence[RankReport], lock: LockSeen | None) -> str:
    """The command that makes these ranks' environment equal the lock, to run on each of their hosts."""
    prefix = ranks[0].prefix
    if lock is None:
        return (
            f"build every node from one lock: `envguard lock {prefix} -o conda-lock.yml` on a good node, "
            f"then `envguard sync {prefix} --lock conda-lock.yml` on each host, and rerun"
        )
    return (
        f"on each host: `envguard sync {prefix} --lock {lock.path}` (or rebuild it: `envguard create --lock "
        f"{lock.path} -p {prefix} --force`), then rerun"
    )


def drift_findings(reports: Sequence[RankReport]) -> list[Finding]:
    """Each rank's environment against the lock it follows, as `check` compares them: ranks that agree with
    each other but not with their lock fail too (a uniformly stale cluster is not a good one). One PASS when
    every rank matches its lock; nothing when no rank follows one."""
    # (a lock that was not compared, drift None and no reason, says nothing here)
    following = [r for r in reports if r.lock is not None and (r.lock.drift is not None or r.lock.changes)]
    if not following:
        return []
    out: list[Finding] = []

    def key(r: RankReport) -> Hashable:
        assert r.lock is not None
        return (r.lock.path, r.lock.drift, r.lock.changes)

    for group in groups([r for r in following if r.lock is not None and r.lock.drift != 0], key):
        lock = group[0].lock
        assert lock is not None
        if lock.drift is None:
            evidence = f"cannot compare with {lock.path}: {'; '.join(lock.changes)}"
            fix = "give every rank a readable lock (pass --lock FILE from a shared filesystem) and rerun"
        else:
            more = lock.drift - len(lock.changes)
            named = "; ".join(lock.changes) + (f"; and {more} more" if more > 0 else "")
            evidence = f"environment differs from {lock.path} ({lock.drift} differences): {named}"
            fix = sync_advice(group, lock)
        out.append(Finding(CATEGORY_AGAINST, name_ranks(group), "FAIL", evidence, fix))
    if not out and len(following) == len(reports):
        locks = sorted({r.lock.path for r in following if r.lock is not None})
        out.append(
            Finding(
                CATEGORY_AGAINST,
                f"{len(reports)} ranks",
                "PASS",
                f"every rank's environment equals {', '.join(locks)}",
            )
        )
    return out


def system_findings(reports: Sequence[RankReport]) -> list[Finding]:
    """Groups of ranks whose virtual packages (driver, glibc) differ from the majority's: a warning."""
    found = groups(reports, lambda r: r.system)
    major = found[0]
    return [
        Finding(
            CATEGORY_ENV,
            f"{name_ranks(group)} (system)",
            "WARN",
            "virtual packages differ: " + ", ".join(sorted(set(group[0].system) ^ set(major[0].system))),
            "align drivers and OS images across nodes, or check that the lock allows both",
        )
        for group in found[1:]
    ]


def shards_comparable(reports: Sequence[RankReport]) -> bool:
    """Whether the ranks' shards can be judged together: one dataset size, one seed, as many epochs."""
    return (
        len({r.dataset_size for r in reports}) == 1
        and len({r.seed for r in reports}) == 1
        and len({len(r.shards) for r in reports}) == 1
    )


def check_shards(reports: Sequence[RankReport]) -> list[ShardCheck]:
    """Per epoch: the ranks' shard sizes, how many shuffled orders they computed, who is off their slice."""
    size, world = reports[0].dataset_size, len(reports)
    return [
        ShardCheck(
            epoch=epoch,
            dataset_size=size,
            world_size=world,
            padding=math.ceil(size / world) * world - size,
            shard_sizes=tuple(r.shards[epoch].length for r in reports),
            orders=len({r.shards[epoch].order_sha256 for r in reports}),
            off_slice=tuple(r.rank for r in reports if not r.shards[epoch].in_slice),
        )
        for epoch in range(len(reports[0].shards))
    ]


def _sizes(sizes: Sequence[int]) -> str:
    if len(set(sizes)) == 1:
        return str(sizes[0])
    return "/".join(map(str, sizes)) if len(sizes) <= 8 else f"{min(sizes)} to {max(sizes)}"


def _order_in(epoch: int) -> Callable[[RankReport], Hashable]:
    """A rank's shuffled order of `epoch` (its digest), to group ranks by."""
    return lambda r: r.shards[epoch].order_sha256


def _partition_findings(reports: Sequence[RankReport], checks: Sequence[ShardCheck]) -> list[Finding]:
    out: list[Finding] = []
    for check in checks:
        covered = (
            f"{check.world_size} shards of {_sizes(check.shard_sizes)} over {check.dataset_size} samples"
        )
        if check.partition:
            evidence = f"{covered} in one shuffled order partition them (padding {check.padding})"
            out.append(Finding(CATEGORY_SHARDS, f"epoch {check.epoch}", "PASS", evidence))
            continue
        problems = []
        if check.orders > 1:
            by_order = groups(reports, _order_in(check.epoch))
            others = "; ".join(which_ranks(g) for g in by_order[1:])
            problems.append(
                f"{others} shuffled it into another order than {which_ranks(by_order[0])} ({check.orders} "
                "orders): their shards overlap and leave samples out"
            )
        if check.off_slice:
            off = [r for r in reports if r.rank in check.off_slice]
            problems.append(f"{which_ranks(off)} did not get its slice of the shared order")
        out.append(
            Finding(
                CATEGORY_SHARDS,
                f"epoch {check.epoch}",
                "FAIL",
                f"{covered}: {'; '.join(problems)}",
                "the same torch build on every rank (randperm's order differs between versions), "
                "DistributedSampler with the real world size and each rank's own rank, the same seed and "
                "dataset everywhere, and set_epoch(epoch) every epoch",
            )
        )
    return out


def shard_findings(reports: Sequence[RankReport], checks: Sequence[ShardCheck]) -> list[Finding]:
    """One dataset size and seed everywhere; per epoch, shards that partition the dataset; DataLoaders that
    deliver their sampler's shard."""
    by_size = groups(reports, lambda r: r.dataset_size)
    if len(by_size) > 1:
        seen = ", ".join(f"{which_ranks(g)}: {g[0].dataset_size}" for g in by_size)
        return [
            Finding(
                CATEGORY_SHARDS,
                "dataset size",
                "FAIL",
                f"ranks see different dataset sizes ({seen})",
                "every rank must index the same data: sync the data folder (or its file list) across hosts",
            )
        ]
    seeds = sorted({r.seed for r in reports})
    if len(seeds) > 1:
        return [
            Finding(
                CATEGORY_SHARDS,
                "sampler seed",
                "FAIL",
                f"ranks use different seeds {seeds}",
                "pass the same seed to DistributedSampler on every rank",
            )
        ]
    out = _partition_findings(reports, checks)

    def bad_epochs(r: RankReport) -> tuple[int, ...]:
        return tuple(s.epoch for s in r.shards if s.loader_delivers is False)

    for group in groups([r for r in reports if bad_epochs(r)], bad_epochs):
        out.append(
            Finding(
                CATEGORY_SHARDS,
                f"{which_ranks(group)} DataLoader",
                "FAIL",
                f"the DataLoader does not deliver the sampler's shard (epochs {list(bad_epochs(group[0]))})",
                "pass the DistributedSampler as sampler= and do not also set shuffle=True",
            )
        )
    return out


def analyze(
    reports: Sequence[Rank],
    rank: int = 0,
    *,
    details: Mapping[int, EnvDetail] | None = None,
    wire: Wire | None = None,
) -> DistributedResult:
    """Judge the gathered summaries (pure; the same statuses on every rank)."""
    ordered = sorted(reports, key=lambda r: r.rank)
    failed = groups([r for r in ordered if isinstance(r, RankFailure)], lambda r: r.error)
    findings = [
        Finding(
            CATEGORY_ENV,
            name_ranks(group),
            "FAIL",
            group[0].error,
            "fix that rank's environment or arguments and rerun",
        )
        for group in failed
    ]
    usable = [r for r in ordered if isinstance(r, RankReport)]
    checks: list[ShardCheck] = []
    if usable and not failed:
        if shards_comparable(usable):
            checks = check_shards(usable)
        findings += environment_findings(usable, details) + system_findings(usable)
        findings += lock_findings(usable) + drift_findings(usable) + shard_findings(usable, checks)
    return DistributedResult(
        rank=rank,
        world_size=len(ordered),
        ranks=tuple(ordered),
        shards=tuple(checks),
        findings=tuple(findings),
        wire=wire,
    )
