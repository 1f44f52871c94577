"""`envguard smoke --record FILE.json` / `--compare FILE.json`: the first N batches' per-index digests
with the environment's fingerprints (python, NumPy, torch, their RNG streams), written on one machine and
checked on another. A mismatch names the first differing batch/index/field and puts the fingerprints side by
side, so a NumPy or torch change is named as the likely cause.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envguard.errors import BadInputError
from envguard.findings import Finding

KIND = "envguard-smoke-record"
VERSION = 1
BATCHES = 4
CATEGORY = "recording"
# the golden probe's fields, in the order they are shown side by side; versions first
VERSIONS = (
    ("python", "python"),
    ("numpy_version", "numpy"),
    ("torch_version", "torch"),
    ("torch_cuda", "CUDA"),
)
STREAMS = ("numpy_legacy", "numpy_generator", "torch_randperm", "dataloader_order")


@dataclass(frozen=True, slots=True)
class Recording:
    path: Path
    dataset: str
    seed: int
    batch_size: int
    batches: int
    samples: tuple[tuple[str, dict[str, str]], ...]  # (index name, field -> digest) in delivery order
    fingerprints: dict[str, Any]


def run_settings(seed: int, batch_size: int, recording: Recording | None) -> dict[str, Any]:
    """What the in-environment module reads: a comparison replays the recording's seed, batch size and
    batches."""
    if recording is not None:
        seed, batch_size = recording.seed, recording.batch_size
    batches = recording.batches if recording is not None else BATCHES
    return {"seed": seed, "batch_size": batch_size, "batches": batches}


def document(raw: dict[str, Any], settings: dict[str, Any], reproduce: str) -> dict[str, Any]:
    """The recording's JSON (sorted, no timestamps: the same run writes the same bytes)."""
    observed = raw.get("record") or {}
    golden = raw.get("golden") or {}
    fingerprints = {key: golden.get(key) for key, _ in VERSIONS} | {key: golden.get(key) for key in STREAMS}
    return {
        "kind": KIND,
        "version": VERSION,
        "written_by": "envguard smoke --record",
        "reproduce": reproduce,
        "dataset": observed.get("dataset"),
        "seed": settings["seed"],
        "batch_size": observed.get("batch_size") or settings["batch_size"],
        "batches": settings["batches"],
        "fingerprints": fingerprints,
        "samples": observed.get("samples") or [],
    }


def write(path: Path, raw: dict[str, Any], settings: dict[str, Any], reproduce: str) -> Path:
    from envguard.atomic import write_text

    if not (raw.get("record") or {}).get("samples"):
        return path  # nothing was read (the dataset raised: its crash is a finding); no empty recording
    text = json.dumps(document(raw, settings, reproduce), indent=1, sort_keys=True) + "\n"
    return write_text(path, text)


def _bad(path: Path, what: str) -> BadInputError:
    return BadInputError(f"--compare {path}: {what}; give a file written by envguard smoke --record")


def load(path: Path) -> Recording:
    """Read a recording; anything else (missing, not JSON, another kind) is one line naming the file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise _bad(path, "no such file") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise _bad(path, f"not readable JSON ({type(exc).__name__})") from None
    if not isinstance(data, dict) or data.get("kind") != KIND:
        raise _bad(path, "not an envguard smoke recording")
    if data.get("version") != VERSION:
        raise _bad(path, f"recording version {data.get('version')!r}, this envguard reads {VERSION}")
    try:
        samples = tuple(
            (str(s["index"]), {str(k): str(v) for k, v in s["fields"].items()}) for s in data["samples"]
        )
        recording = Recording(
            path=path,
            dataset=str(data.get("dataset")),
            seed=int(data["seed"]),
            batch_size=int(data["batch_size"]),
            batches=int(data["batches"]),
            samples=samples,
            fingerprints=dict(data["fingerprints"]),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise _bad(path, f"a malformed recording ({type(exc).__name__}: {exc})") from None
    if recording.seed < 0 or recording.batch_size < 1 or recording.batches < 1 or not samples:
        raise _bad(path, "a recording without samples or with a bad seed/batch size")
    return recording


def _first_difference(recorded: Recording, now: list[dict[str, Any]]) -> str | None:
    """Where the current run first departs from the recording, in words; None when it does not."""
    for position, (index, fields) in enumerate(recorded.samples):
        where = f"batch {position // recorded.batch_size}, sample {position % recorded.batch_size}"
        if position >= len(now):
            return f"{where}: recorded {index}, but this run delivered only {len(now)} samples"
        here = now[position]
        if here["index"] != index:
            return f"{where}: recorded {index}, now {here['index']} (the sample order changed)"
        for name in sorted(set(fields) | set(here["fields"])):
            old, new = fields.get(name), here["fields"].get(name)
            if old != new:
                what = "missing now" if new is None else "new" if old is None else f"{old[:12]} -> {new[:12]}"
                changed = sum(
                    1 for (_i, f), h in zip(recorded.samples, now, strict=False) if f != h["fields"]
                )
                total = min(len(now), len(recorded.samples))
                return (
                    f"{where}, {index}: field {name!r} differs ({what}); {changed} of {total} samples differ"
                )
    if len(now) > len(recorded.samples):
        return f"this run delivered {len(now)} samples, the recording {len(recorded.samples)}"
    return None


def side_by_side(recorded: dict[str, Any], now: dict[str, Any]) -> tuple[str, list[tuple[str, Any, Any]]]:
    """("recorded -> here: python 3.11.7 = 3.11.7; numpy 2.4.6 -> 1.26.4; ...", [(label, recorded, here)
    for each changed version or RNG stream, versions first])."""
    parts, changed = [], []
    for key, label in VERSIONS:
        old, new = recorded.get(key), now.get(key)
        parts.append(f"{label} {old} = {new}" if old == new else f"{label} {old} -> {new}")
        if old != new:
            changed.append((label, old, new))
    for key in STREAMS:
        old, new = recorded.get(key), now.get(key)
        parts.append(f"{key} {'same' if old == new else f'{str(old)[:12]} -> {str(new)[:12]}'}")
        if old != new:
            changed.append((f"the {key} stream", old, new))
    return "recorded -> here: " + "; ".join(parts), changed


def _cause(changed: list[tuple[str, Any, Any]], name: str) -> tuple[str, str]:
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


def compare(recorded: Recording, raw: dict[str, Any]) -> list[Finding]:
    check = f"matches {recorded.path.name}"
    observed = raw.get("record")
    if not observed:
        return [
            Finding(CATEGORY, check, "FAIL", "no batches were read (see the crash above)", "fix the crash")
        ]
    fingerprints, changed = side_by_side(recorded.fingerprints, raw.get("golden") or {})
    difference = _first_difference(recorded, list(observed.get("samples") or ()))
    scope = f"{len(recorded.samples)} samples of {recorded.batches} batches (seed {recorded.seed})"
    if difference is None:
        return [Finding(CATEGORY, check, "PASS", f"the first {scope} match; fingerprints {fingerprints}")]
    cause, fix = _cause(changed, recorded.path.name)
    if observed.get("dataset") != recorded.dataset:
        difference += (
            f" (the recording read the {recorded.dataset} dataset, this run the {observed.get('dataset')})"
        )
    evidence = f"first difference within the {scope}: {difference}; {cause}; fingerprints {fingerprints}"
    return [Finding(CATEGORY, check, "FAIL", evidence, fix)]
