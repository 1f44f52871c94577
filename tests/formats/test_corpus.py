"""Every real-world file in ../shared/corpus goes through its reader: it parses, or fails with a clean
one-line BadInputError naming the file. Files the MANIFEST marks MALFORMED or CORRUPT may fail; every other
one must parse."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from envguard.errors import BadInputError
from envguard.formats import detect_kind, read_file
from tests.helpers import SHARED

CORPUS = SHARED / "corpus"
KINDS = {
    "env_yml": "environment.yml",
    "explicit": "explicit",
    "conda_lock": "conda-lock",
    "pixi_lock": "pixi-lock",
}


def _files() -> list[str]:
    if not CORPUS.is_dir():
        return ["<../shared absent>"]
    return sorted(
        p.relative_to(CORPUS).as_posix()
        for p in CORPUS.rglob("*")
        if p.is_file() and p.name != "MANIFEST.tsv"
    )


def _manifest_notes(corpus: Path) -> dict[str, str]:
    with open(corpus / "MANIFEST.tsv", encoding="utf-8", newline="") as handle:
        return {row["local_file"]: row["notes"] for row in csv.DictReader(handle, delimiter="\t")}


def _read(path: Path, folder: str) -> object:
    """Run the reader that matches the corpus folder."""
    if folder in KINDS:
        assert detect_kind(path) == KINDS[folder]
        return read_file(path)
    if folder == "conda_meta" and path.name.endswith(".json"):
        from envguard.prefix.records import load_record, record_to_package

        package = record_to_package(load_record(path))
        assert package.name and package.version and package.manager == "conda"
        return package
    if folder == "conda_meta":
        from envguard.prefix import history

        return history.requested_specs(history.parse(path.read_text(encoding="utf-8")))
    if folder == "conda_info":
        from envguard.clean.discovery import parse_info

        return parse_info(json.loads(path.read_text(encoding="utf-8")))
    raise AssertionError(f"no reader for corpus folder {folder!r}; add one to this test")


@pytest.mark.parametrize("rel", _files())
def test_corpus_file_parses_or_fails_cleanly(rel: str, shared: Path) -> None:
    path = shared / "corpus" / rel
    notes = _manifest_notes(shared / "corpus").get(rel)
    assert notes is not None, f"{rel} is not listed in MANIFEST.tsv"
    may_fail = "MALFORMED" in notes or "CORRUPT" in notes
    try:
        result = _read(path, rel.split("/", 1)[0])
    except BadInputError as exc:
        message = str(exc)
        assert "\n" not in message, message
        assert path.name in message, f"the message must name the file: {message}"
        assert may_fail, f"{rel} should parse (MANIFEST: {notes}) but: {message}"
        return
    assert result is not None


def test_histories_fold_to_requested_specs(shared: Path) -> None:
    from envguard.prefix import history

    recent = (
        shared / "corpus/conda_meta/conda__conda__tests_data_env_metadata_envpy313tosx_whl_conda-meta_history"
    )
    specs = history.requested_specs(history.parse(recent.read_text()))
    assert specs.get("python_abi") == "python_abi[build=*_cp313t]"
    old = shared / "corpus/conda_meta/conda__conda__tests_conda-meta_history"
    revisions = history.parse(old.read_text())
    assert revisions and all(r.added or r.removed or r.update_specs for r in revisions)


def _lock_platforms(path: Path, kind: str) -> list[str]:
    if kind == "pixi_lock":
        import rattler

        return [p.name for p in rattler.LockFile.from_path(path).platforms()]
    import yaml

    return list(yaml.safe_load(path.read_text())["metadata"]["platforms"])


@pytest.mark.parametrize("rel", [f for f in _files() if f.startswith(("pixi_lock/", "conda_lock/"))])
def test_every_platform_of_every_lock_reads(rel: str, shared: Path) -> None:
    path = shared / "corpus" / rel
    platforms = _lock_platforms(path, rel.split("/", 1)[0])
    assert platforms
    for platform in platforms:
        env = read_file(path, platform=platform)
        assert env.platform == platform and env.packages
        assert {p.subdir for p in env.conda_packages()} <= {platform, "noarch"}
