"""`envguard smoke --record FILE.json` / `--compare FILE.json` across two real environments (this venv with
NumPy 2, a second venv with NumPy 1.26.4), with planted datasets that a NumPy upgrade or an edit changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import REPO, by_check, envguard, smoke_json

PLANTED = REPO / "tests" / "record_planted.py"
FAST = ("--budget", "12", "--workers", "0", "--batch-size", "16")
HERE = Path(__import__("sys").prefix)  # this interpreter's environment (torch, NumPy 2)


def record(capsys: pytest.CaptureFixture[str], env: Path, name: str, out: Path) -> dict[str, object]:
    _code, data = smoke_json(capsys, str(env), *FAST, "--dataset", f"{PLANTED}:{name}", "--record", str(out))
    assert out.is_file() and data["recording"]["written"] == {"path": str(out), "samples": 64}
    return data


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
    assert "torch 2.13.0+cpu = 2.13.0+cpu" in there["evidence"]
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


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("{not json", "not readable JSON (JSONDecodeError)"),
        ('{"schema_version": 1, "findings": []}', "not an envguard smoke recording"),
        ("[1, 2]", "not an envguard smoke recording"),
        ('{"kind": "envguard-smoke-record", "version": 9}', "recording version 9, this envguard reads 1"),
        ('{"kind": "envguard-smoke-record", "version": 1, "seed": 1}', "a malformed recording (KeyError"),
        (b"\xff\xfe\x00", "not readable JSON (UnicodeDecodeError)"),
    ],
)
def test_a_bad_or_foreign_recording_is_one_line(
    prefix: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | bytes, why: str
) -> None:
    bad = tmp_path / "other.json"
    bad.write_bytes(content if isinstance(content, bytes) else content.encode())
    assert envguard("smoke", str(prefix), *FAST, "--compare", str(bad)) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"envguard: error: --compare {bad}: {why}") and "\n" not in err
    assert err.endswith("give a file written by envguard smoke --record")


def test_a_missing_recording_is_refused_before_anything_runs(
    prefix: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere.json"
    assert envguard("smoke", str(prefix), *FAST, "--compare", str(missing)) == 2
    assert f"--compare {missing}: no such file" in capsys.readouterr().err


@pytest.mark.slow
def test_a_loader_is_recorded_with_its_own_sampler_and_batch_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    loader = f"{REPO / 'tests' / 'pipeline_planted.py'}:seeded_loader"
    recording = tmp_path / "loader.json"
    _code, data = smoke_json(
        capsys, str(HERE), "--budget", "20", "--loader", loader, "--record", str(recording)
    )
    written = json.loads(recording.read_text())
    assert written["dataset"] == "loader" and written["batch_size"] == 8 and len(written["samples"]) == 32
    assert written["reproduce"] == f"envguard smoke ENV --loader {loader} --compare loader.json"
    _code, data = smoke_json(
        capsys, str(HERE), "--budget", "20", "--loader", loader, "--compare", str(recording)
    )
    assert by_check(data)["matches loader.json"]["status"] == "PASS"
