"""recordfile.py: a --compare FILE.json that is missing, not JSON, another kind or malformed is one line
naming the file (exit 2), refused before anything runs; a recording is read back as it was written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envguard.errors import BadInputError
from envguard.model import Fingerprints
from envguard.smoke import recordfile
from envguard.smoke.measured import FirstBatches, SampleDigests
from tests.helpers import envguard

FAST = ("--budget", "12", "--workers", "0", "--batch-size", "16")


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("{not json", "not readable JSON (JSON is malformed"),
        ('{"schema_version": 1, "findings": []}', "not an envguard smoke recording"),
        ("[1, 2]", "not an envguard smoke recording"),
        ('{"kind": "envguard-smoke-record", "version": 9}', "recording version 9, this envguard reads 1"),
        (
            '{"kind": "envguard-smoke-record", "version": 1, "seed": 1}',
            "a malformed recording (Object missing required field `batch_size`)",
        ),
        (
            '{"kind": "envguard-smoke-record", "version": 1, "seed": "1", "batch_size": 2}',
            "a malformed recording (Expected `int`, got `str` - at `$.seed`)",
        ),
        (b"\xff\xfe\x00", "not readable JSON (JSON is malformed"),
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


def test_a_recording_reads_back_what_was_written(tmp_path: Path) -> None:
    observed = FirstBatches(
        "user", 2, (SampleDigests("index:3", {"0": "a" * 16}), SampleDigests("index:1", {"0": "b" * 16}))
    )
    golden = Fingerprints(python="3.11.7", numpy_version="2.4.6", torch_randperm="c" * 64)
    run = recordfile.replay(7, 2, None)
    path = recordfile.write(tmp_path / "r.json", observed, golden, run, "envguard smoke ENV --compare r.json")
    data = json.loads(path.read_text())
    assert data["fingerprints"]["numpy_version"] == "2.4.6" and data["fingerprints"]["torch_cuda"] is None
    assert (
        list(data["fingerprints"]) == sorted(data["fingerprints"]) and data["batches"] == recordfile.BATCHES
    )
    back = recordfile.load(path)
    assert back.samples == observed.samples and back.fingerprints == golden and back.seed == 7
    assert recordfile.replay(1, 32, back) == recordfile.Replay(
        seed=7, batch_size=2, batches=recordfile.BATCHES
    )
    assert recordfile.write(tmp_path / "none.json", None, golden, run, "") == tmp_path / "none.json"
    assert not (tmp_path / "none.json").exists()  # nothing read: no empty recording


def test_a_recording_not_utf8_past_its_header_is_one_line(tmp_path: Path) -> None:
    """The file fuzz's case (issue 42): bytes that are not UTF-8 in a field the header's read skips raised
    msgspec's DecodeError from the second read (exit 4); now one line naming the file, exit 2."""
    document = {"kind": recordfile.KIND, "version": recordfile.VERSION, "dataset": "XX", "seed": 0}
    path = tmp_path / "r.json"
    path.write_bytes(json.dumps(document).encode().replace(b"XX", b"mn\xffist"))
    with pytest.raises(BadInputError) as refused:
        recordfile.load(path)
    assert str(path) in str(refused.value) and "\n" not in str(refused.value)
