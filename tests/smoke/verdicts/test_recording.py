"""verdicts/recording.py, `envguard smoke --record FILE.json` / `--compare FILE.json`: across two real
environments (this venv with NumPy 2, a second venv with NumPy 1.26.4), with planted datasets that a NumPy
upgrade or an edit changes; and the comparison itself over hand-built records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from envguard.model import Fingerprints
from envguard.smoke.measured import FirstBatches, SampleDigests
from envguard.smoke.recordfile import Recording
from envguard.smoke.verdicts import recording as verdict
from tests.helpers import REPO, by_check, smoke_json

PLANTED = REPO / "tests" / "record_planted.py"
FAST = ("--budget", "12", "--workers", "0", "--batch-size", "16")
HERE = Path(__import__("sys").prefix)  # this interpreter's environment (torch, NumPy 2)


def record(capsys: pytest.CaptureFixture[str], env: Path, name: str, out: Path) -> dict[str, object]:
    _code, data = smoke_json(capsys, str(env), *FAST, "--dataset", f"{PLANTED}:{name}", "--record", str(out))
    assert out.is_file(), stopped(data)
    assert data["recording"]["written"] == {"path": str(out), "samples": 64}
    return data


def stopped(data: dict[str, Any]) -> object:
    """Why a run wrote no recording: its budget finding (the time ran out, and in which phase), else every
    finding."""
    return by_check(data).get("finished within --budget", data["findings"])


def compare(capsys: pytest.CaptureFixture[str], env: Path, name: str, recording: Path) -> tuple[int, dict]:
    code, data = smoke_json(
        capsys, str(env), *FAST, "--dataset", f"{PLANTED}:{name}", "--compare", str(recording)
    )
    return code, by_check(data)[f"matches {recording.name}"]


@pytest.mark.slow
def test_a_numpy_change_is_named_as_the_cause(
    numpy1_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recording = tmp_path / "numpy2.json"
    record(capsys, HERE, "Scaled", recording)
    written = json.loads(recording.read_text())
    assert (
        written["kind"] == "envguard-smoke-record" and written["batch_size"] == 16 and written["batches"] == 4
    )
    assert written["fingerprints"]["numpy_version"].startswith("2.")
    assert [s["index"] for s in written["samples"]][:3] != [
        "index:0",
        "index:1",
        "index:2",
    ]  # the seeded shuffle
    code, same = compare(capsys, HERE, "Scaled", recording)
    assert (code, same["status"]) == (0, "PASS") and "numpy 2." in same["evidence"]
    code, there = compare(capsys, numpy1_env, "Scaled", recording)
    assert (code, there["status"]) == (1, "FAIL")
    first = written["samples"][0]["index"]
    assert f"batch 0, sample 0, {first}: field 'weight' differs" in there["evidence"]
    assert "64 of 64 samples differ" in there["evidence"]
    assert (
        f"likely cause: numpy {written['fingerprints']['numpy_version']} (recorded) is 1.26.4 here"
        in there["evidence"]
    )
    torch_version = written["fingerprints"]["torch_version"]  # 2.13.0+cpu, or +cu130 with PyPI's CUDA wheel
    assert f"torch {torch_version} = {torch_version}" in there["evidence"]
    assert there["fix"].startswith(
        f"install what was recorded (numpy=={written['fingerprints']['numpy_version']})"
    )


@pytest.mark.slow
def test_an_edited_dataset_names_the_sample_and_keeps_the_environment_out_of_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recording = tmp_path / "before.json"
    record(capsys, HERE, "Scaled", recording)
    before = recording.read_bytes()
    record(capsys, HERE, "Scaled", recording)
    assert recording.read_bytes() == before  # deterministic: the same run writes the same bytes
    samples = json.loads(before)["samples"]
    position = next(i for i, s in enumerate(samples) if s["index"] == "index:41")
    code, edited = compare(capsys, HERE, "ScaledEdited", recording)
    assert (code, edited["status"]) == (1, "FAIL")
    where = f"batch {position // 16}, sample {position % 16}, index:41: field 'image' differs"
    assert where in edited["evidence"] and "1 of 64 samples differ" in edited["evidence"]
    assert (
        "same python, NumPy, torch and RNG streams: the dataset's code or its files changed"
        in edited["evidence"]
    )


@pytest.mark.slow
def test_a_loader_is_recorded_with_its_own_sampler_and_batch_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    loader = f"{REPO / 'tests' / 'pipeline_planted.py'}:seeded_loader"
    recording = tmp_path / "loader.json"
    _code, data = smoke_json(
        capsys, str(HERE), "--budget", "30", "--loader", loader, "--record", str(recording)
    )
    assert recording.is_file(), stopped(data)
    written = json.loads(recording.read_text())
    assert written["dataset"] == "loader" and written["batch_size"] == 8 and len(written["samples"]) == 32
    assert written["reproduce"] == f"envguard smoke ENV --loader {loader} --compare loader.json"
    _code, data = smoke_json(
        capsys, str(HERE), "--budget", "30", "--loader", loader, "--compare", str(recording)
    )
    assert by_check(data)["matches loader.json"]["status"] == "PASS"


def a_recording(samples: list[tuple[str, dict[str, str]]], **fingerprints: str) -> Recording:
    return Recording(
        path=Path("before.json"),
        dataset="user",
        seed=7,
        batch_size=2,
        batches=2,
        samples=tuple(SampleDigests(index, fields) for index, fields in samples),
        fingerprints=Fingerprints(**fingerprints),
    )


SAMPLES = [
    ("index:3", {"image": "a" * 16}),
    ("index:1", {"image": "b" * 16}),
    ("index:0", {"image": "c" * 16}),
]


def test_compare_names_the_first_difference_and_the_likely_cause() -> None:
    recorded = a_recording(SAMPLES, numpy_version="2.4.6", torch_version="2.13.0")
    now = FirstBatches(dataset="user", batch_size=2, samples=recorded.samples)
    (same,) = verdict.compare(recorded, now, Fingerprints(numpy_version="2.4.6", torch_version="2.13.0"))
    assert same.status == "PASS" and "numpy 2.4.6 = 2.4.6" in same.evidence
    edited = (*recorded.samples[:2], SampleDigests("index:0", {"image": "d" * 16}))
    (moved,) = verdict.compare(
        recorded, FirstBatches("user", 2, edited), Fingerprints(numpy_version="1.26.4")
    )
    assert moved.status == "FAIL" and "batch 1, sample 0, index:0: field 'image' differs" in moved.evidence
    assert "numpy 2.4.6 (recorded) is 1.26.4 here" in moved.evidence and "numpy==2.4.6" in moved.fix
    reordered = FirstBatches("other", 2, tuple(reversed(recorded.samples)))
    (order,) = verdict.compare(recorded, reordered, None)
    assert "the sample order changed" in order.evidence and "this run the other" in order.evidence
    (nothing,) = verdict.compare(recorded, None, None)
    assert nothing.status == "FAIL" and "no batches were read" in nothing.evidence
