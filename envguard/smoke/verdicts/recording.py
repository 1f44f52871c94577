"""--compare FILE.json (pure): this run's first batches against a recording from another machine or
environment. A mismatch names the first differing batch/index/field and puts the fingerprints side by side,
so a NumPy or torch change is named as the likely cause."""

from __future__ import annotations

from collections.abc import Sequence

from envguard.findings import Finding
from envguard.model import Fingerprints
from envguard.smoke.measured import FirstBatches, SampleDigests
from envguard.smoke.recordfile import STREAMS, VERSIONS, Recording

CATEGORY = "recording"


def _first_difference(recorded: Recording, now: Sequence[SampleDigests]) -> str | None:
    """Where the current run first departs from the recording, in words; None when it does not."""
    for position, sample in enumerate(recorded.samples):
        index, fields = sample.index, sample.fields
        where = f"batch {position // recorded.batch_size}, sample {position % recorded.batch_size}"
        if position >= len(now):
            return f"{where}: recorded {index}, but this run delivered only {len(now)} samples"
        here = now[position]
        if here.index != index:
            return f"{where}: recorded {index}, now {here.index} (the sample order changed)"
        for name in sorted(set(fields) | set(here.fields)):
            old, new = fields.get(name), here.fields.get(name)
            if old != new:
                what = "missing now" if new is None else "new" if old is None else f"{old[:12]} -> {new[:12]}"
                changed = sum(1 for r, h in zip(recorded.samples, now, strict=False) if r.fields != h.fields)
                total = min(len(now), len(recorded.samples))
                return (
                    f"{where}, {index}: field {name!r} differs ({what}); {changed} of {total} samples differ"
                )
    if len(now) > len(recorded.samples):
        return f"this run delivered {len(now)} samples, the recording {len(recorded.samples)}"
    return None


Change = tuple[str, str | None, str | None]  # (what, recorded, here)


def side_by_side(recorded: Fingerprints, now: Fingerprints) -> tuple[str, list[Change]]:
    """("recorded -> here: python 3.11.7 = 3.11.7; numpy 2.4.6 -> 1.26.4; ...", [(label, recorded, here)
    for each changed version or RNG stream, versions first])."""
    parts: list[str] = []
    changed: list[Change] = []
    for key, label in VERSIONS:
        old, new = getattr(recorded, key), getattr(now, key)
        parts.append(f"{label} {old} = {new}" if old == new else f"{label} {old} -> {new}")
        if old != new:
            changed.append((label, old, new))
    for key in STREAMS:
        old, new = getattr(recorded, key), getattr(now, key)
        parts.append(f"{key} {'same' if old == new else f'{str(old)[:12]} -> {str(new)[:12]}'}")
        if old != new:
            changed.append((f"the {key} stream", old, new))
    return "recorded -> here: " + "; ".join(parts), changed


def _cause(changed: list[Change], name: str) -> tuple[str, str]:
    """(likely cause, fix) from the changed fingerprints."""
    if not changed:
        return (
            "same python, NumPy, torch and RNG streams: the dataset's code or its files changed",
            "find what changed in the dataset (code, files, transforms); record again if it is intended",
        )
    versions = [(label, old, new) for label, old, new in changed if not label.startswith("the ")]
    if versions:
        cause = "likely cause: " + ", ".join(
            f"{label} {old} (recorded) is {new} here" for label, old, new in versions
        )
        pins = " ".join(f"{label}=={old}" for label, old, _new in versions if label in ("numpy", "torch"))
        fix = f"install what was recorded ({pins or ', '.join(label for label, _o, _n in versions)})"
    else:
        streams = ", ".join(label for label, _o, _n in changed)
        cause = f"likely cause: {streams} changed with the same versions (another build, platform or device)"
        fix = "run on the build and platform that was recorded"
    return cause, f"{fix}, or, if the change is intended, record again with --record {name}"


def compare(recorded: Recording, observed: FirstBatches | None, golden: Fingerprints | None) -> list[Finding]:
    """This run's first batches against the recording; on a difference, the likely cause from the
    fingerprints side by side."""
    check = f"matches {recorded.path.name}"
    if observed is None:
        return [
            Finding(CATEGORY, check, "FAIL", "no batches were read (see the crash above)", "fix the crash")
        ]
    fingerprints, changed = side_by_side(recorded.fingerprints, golden or Fingerprints())
    difference = _first_difference(recorded, observed.samples)
    scope = f"{len(recorded.samples)} samples of {recorded.batches} batches (seed {recorded.seed})"
    if difference is None:
        return [Finding(CATEGORY, check, "PASS", f"the first {scope} match; fingerprints {fingerprints}")]
    cause, fix = _cause(changed, recorded.path.name)
    if observed.dataset != recorded.dataset:
        difference += f" (the recording read the {recorded.dataset} dataset, this run the {observed.dataset})"
    evidence = f"first difference within the {scope}: {difference}; {cause}; fingerprints {fingerprints}"
    return [Finding(CATEGORY, check, "FAIL", evidence, fix)]
