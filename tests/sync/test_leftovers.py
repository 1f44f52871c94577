"""What a killed sync leaves (envguard.sync.leftovers), by hand: the next sync removes the folders the change
emptied and rattler's leftovers, and nothing else (a folder still holding a file, the user's own
CACHEDIR.TAG, a folder named outside the prefix)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from envguard.model import Package
from envguard.sync import leftovers

RATTLERS_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by rattler.\n"
)


def _prefix(tmp_path: Path) -> Path:
    prefix = tmp_path / "envs" / "env"
    (prefix / "conda-meta").mkdir(parents=True)
    (prefix / "conda-meta" / "zlib-1.3.1-h0_0.json").write_text("{}")
    return prefix


def test_the_next_sync_removes_what_a_killed_one_left(tmp_path: Path) -> None:
    prefix = _prefix(tmp_path)
    for folder in ("lib/python3.11/site-packages", "lib/python3.11/json", "share/kept"):
        (prefix / folder).mkdir(parents=True)
    (prefix / "share" / "kept" / "user.txt").write_text("mine")
    (prefix.parent / "outside").mkdir()
    (prefix / "conda-meta" / "prefix_record_ZZhSWm").write_text("{")
    (prefix / "CACHEDIR.TAG").write_text(RATTLERS_TAG)
    os.symlink("./", prefix / "symtest_5520e134-6558-470b-8f10-2c9ef16a22e2")
    folders = ["lib", "lib/python3.11", "lib/python3.11/site-packages", "lib/python3.11/json", "share/kept"]
    marker = {"pid": 1, "folders": [*folders, "../outside"], "tagged": False}
    leftovers.marker_path(prefix).write_text(json.dumps(marker))

    said = leftovers.remove(prefix)

    assert len(said) == 1 and "prefix_record_ZZhSWm" in said[0] and "lib/python3.11/" in said[0], said
    left = sorted(str(p.relative_to(prefix)) for p in prefix.rglob("*"))
    assert left == [
        "conda-meta",
        "conda-meta/zlib-1.3.1-h0_0.json",
        "share",
        "share/kept",
        "share/kept/user.txt",
    ]
    assert (prefix.parent / "outside").is_dir() and not leftovers.marker_path(prefix).exists()
    assert sorted(p.name for p in prefix.parent.iterdir()) == ["env", "outside"]  # the lock file went too


def test_nothing_left_is_no_warning_and_a_tag_of_before_stays(tmp_path: Path) -> None:
    """A CACHEDIR.TAG is removed only where the killed sync's file says the prefix had none (a prefix made
    by rattler or pixi keeps theirs)."""
    prefix = _prefix(tmp_path)
    (prefix / "CACHEDIR.TAG").write_text(RATTLERS_TAG)
    assert leftovers.remove(prefix) == ()
    assert (prefix / "CACHEDIR.TAG").is_file()
    assert sorted(p.name for p in prefix.parent.iterdir()) == ["env"]  # no lock taken
    leftovers.marker_path(prefix).write_text(json.dumps({"pid": 1, "folders": [], "tagged": True}))
    assert leftovers.remove(prefix) == ()
    assert (prefix / "CACHEDIR.TAG").is_file() and not leftovers.marker_path(prefix).exists()


def test_the_folders_of_a_record(tmp_path: Path) -> None:
    prefix = _prefix(tmp_path)
    record = {"files": ["lib/python3.11/json/__init__.py", "bin/python3.11", 5, "top.txt"]}
    (prefix / "conda-meta" / "python-3.11.9-h0_0.json").write_text(json.dumps(record))
    python = Package("conda", "python", "3.11.9", "h0_0")
    missing = Package("conda", "gone", "1", "0")
    assert leftovers.folders_of(prefix, [python, missing]) == [
        "bin",
        "lib",
        "lib/python3.11",
        "lib/python3.11/json",
    ]
