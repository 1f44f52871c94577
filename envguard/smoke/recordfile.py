"""The file of `envguard smoke --record FILE.json` / `--compare FILE.json`: the first N batches' per-index
digests with the environment's fingerprints (python, NumPy, torch, their RNG streams), written on one machine
and read on another (verdicts/recording.py compares them).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from envguard.atomic import write_text
from envguard.errors import BadInputError
from envguard.model import Fingerprints
from envguard.smoke.measured import FirstBatches, SampleDigests

KIND = "envguard-smoke-record"
VERSION = 1
BATCHES = 4
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
    samples: tuple[SampleDigests, ...]  # in delivery order
    fingerprints: Fingerprints


@dataclass(frozen=True, slots=True)
class Replay:
    """What the in-environment module reads the first batches with."""

    seed: int
    batch_size: int
    batches: int


def replay(seed: int, batch_size: int, recording: Recording | None) -> Replay:
    """A comparison replays the recording's seed, batch size and batches; a recording this run's."""
    if recording is not None:
        seed, batch_size = recording.seed, recording.batch_size
    batches = recording.batches if recording is not None else BATCHES
    return Replay(seed=seed, batch_size=batch_size, batches=batches)


def document(
    observed: FirstBatches, golden: Fingerprints | None, run: Replay, reproduce: str
) -> dict[str, Any]:
    """The recording's JSON (sorted, no timestamps: the same run writes the same bytes)."""
    here = golden or Fingerprints()
    keys = [key for key, _ in VERSIONS] + list(STREAMS)
    return {
        "kind": KIND,
        "version": VERSION,
        "written_by": "envguard smoke --record",
        "reproduce": reproduce,
        "dataset": observed.dataset,
        "seed": run.seed,
        "batch_size": observed.batch_size or run.batch_size,
        "batches": run.batches,
        "fingerprints": {key: getattr(here, key) for key in keys},
        "samples": [{"index": s.index, "fields": dict(s.fields)} for s in observed.samples],
    }


def write(
    path: Path, observed: FirstBatches | None, golden: Fingerprints | None, run: Replay, reproduce: str
) -> Path:
    if observed is None or not observed.samples:
        return path  # nothing was read (the dataset raised: its crash is a finding); no empty recording
    text = json.dumps(document(observed, golden, run, reproduce), indent=1, sort_keys=True) + "\n"
    return write_text(path, text)


def _bad(path: Path, what: str) -> BadInputError:
    return BadInputError(f"--compare {path}: {what}; give a file written by envguard smoke --record")


class _Header(msgspec.Struct, frozen=True):
    kind: object = None
    version: object = None


class _Written(msgspec.Struct, frozen=True):
    """A recording as `document` writes it (the keys `load` needs)."""

    seed: int
    batch_size: int
    batches: int
    samples: tuple[SampleDigests, ...]
    fingerprints: Fingerprints
    dataset: str | None = None


def load(path: Path) -> Recording:
    """Read a recording; anything else (missing, not JSON, another kind) is one line naming the file."""
    try:
        text = path.read_bytes()
        header = msgspec.json.decode(text, type=_Header)
    except FileNotFoundError:
        raise _bad(path, "no such file") from None
    except msgspec.ValidationError:
        raise _bad(path, "not an envguard smoke recording") from None
    except (OSError, msgspec.DecodeError) as exc:
        raise _bad(path, f"not readable JSON ({exc})") from None
    if header.kind != KIND:
        raise _bad(path, "not an envguard smoke recording")
    if header.version != VERSION:
        raise _bad(path, f"recording version {header.version!r}, this envguard reads {VERSION}")
    try:
        written = msgspec.json.decode(text, type=_Written)
    except msgspec.ValidationError as exc:
        raise _bad(path, f"a malformed recording ({exc})") from None
    except msgspec.DecodeError as exc:  # the header's read skips the other fields unchecked (bytes not UTF-8)
        raise _bad(path, f"not readable JSON ({exc})") from None
    if written.seed < 0 or written.batch_size < 1 or written.batches < 1 or not written.samples:
        raise _bad(path, "a recording without samples or with a bad seed/batch size")
    return Recording(
        path=path,
        dataset=str(written.dataset),
        seed=written.seed,
        batch_size=written.batch_size,
        batches=written.batches,
        samples=written.samples,
        fingerprints=written.fingerprints,
    )
