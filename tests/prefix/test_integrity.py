"""verify_files: missing and altered files of real rattler-installed prefixes against conda-meta
paths_data."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from envguard.prefix.integrity import verify_files
from tests.helpers import MakePrefix


def replace_file(path: Path, data: bytes) -> None:
    """Write a new file in place of `path` (rattler hardlinks from its cache: never edit the shared inode)."""
    path.unlink()
    path.write_bytes(data)


@pytest.fixture
def prefix(make_prefix: MakePrefix) -> Path:
    return make_prefix(["python=3.11", "numpy=1.26", "zlib"])


def test_pristine_prefix_has_no_problems(prefix: Path) -> None:
    report = verify_files(prefix)
    assert report.problems == () and report.packages >= 3 and report.files >= 3 and report.unverified == 0


def test_missing_and_altered_files_are_found(prefix: Path) -> None:
    zlib = next((prefix / "share" / "zlib").iterdir())
    zlib.unlink()
    module = prefix / "lib" / "python3.11" / "site-packages" / "numpy" / "__init__.py"
    original = module.read_bytes()
    replace_file(module, bytes(reversed(original)))  # same size, other content
    report = verify_files(prefix)
    problems = {(p.package.split("-")[0], p.problem) for p in report.problems}
    assert problems == {("zlib", "missing"), ("numpy", "altered")}
    altered = next(p for p in report.problems if p.problem == "altered")
    assert "sha256" in altered.detail
    # without hashes only the deletion shows: the edit kept the size
    assert {p.problem for p in verify_files(prefix, hashes=False).problems} == {"missing"}
    replace_file(module, original + b"# edited\n")
    sized = [p for p in verify_files(prefix, hashes=False).problems if p.problem == "altered"]
    assert sized and "size" in sized[0].detail


def test_only_named_packages(prefix: Path) -> None:
    next((prefix / "share" / "zlib").iterdir()).unlink()
    assert verify_files(prefix, packages=["numpy"]).problems == ()
    assert len(verify_files(prefix, packages=["zlib"]).problems) == 1


def write_record(
    prefix: Path, name: str, paths: list[dict[str, object]] | None, files: list[str] | None = None
) -> None:
    record: dict[str, object] = {"name": name, "version": "1.0", "build": "0", "channel": "local"}
    if paths is not None:
        record["paths_data"] = {"paths_version": 1, "paths": paths}
    if files is not None:
        record["files"] = files
    (prefix / "conda-meta").mkdir(parents=True, exist_ok=True)
    (prefix / "conda-meta" / f"{name}-1.0-0.json").write_text(json.dumps(record))


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_path_types_and_prefix_placeholders(tmp_path: Path) -> None:
    prefix = tmp_path / "env"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "tool").write_bytes(b"#!/env/bin/python\n")
    os.symlink("tool", prefix / "bin" / "tool-link")
    (prefix / "etc").mkdir()
    (prefix / "etc" / "conf").write_bytes(b"prefix=/env\n")
    (prefix / "lib").mkdir()
    paths: list[dict[str, object]] = [
        # text placeholder rewritten at install, no sha256_in_prefix: existence only, counted unverified
        {
            "_path": "bin/tool",
            "path_type": "hardlink",
            "sha256": sha(b"#!/opt/placeholder/bin/python\n"),
            "size_in_bytes": 30,
            "prefix_placeholder": "/opt/placeholder",
            "file_mode": "text",
        },
        # conda writes sha256_in_prefix for rewritten files: that one is compared
        {
            "_path": "etc/conf",
            "path_type": "hardlink",
            "sha256": sha(b"prefix=/opt/placeholder\n"),
            "prefix_placeholder": "/opt/placeholder",
            "file_mode": "text",
            "sha256_in_prefix": sha(b"prefix=/other\n"),
        },
        {"_path": "bin/tool-link", "path_type": "softlink"},
        {"_path": "lib", "path_type": "directory"},
        {"_path": "lib/gone.pyc", "path_type": "pyc_file"},
        {"_path": "bin/entry", "path_type": "unix_python_entry_point"},
    ]
    write_record(prefix, "pkg", paths)
    write_record(prefix, "legacy", None, files=["share/legacy.txt"])
    report = verify_files(prefix)
    assert report.unverified == 2 and report.packages == 2  # bin/tool and the legacy record's file
    found = {(p.path, p.problem) for p in report.problems}
    assert found == {("etc/conf", "altered"), ("bin/entry", "missing"), ("share/legacy.txt", "missing")}


def test_not_a_conda_prefix(tmp_path: Path) -> None:
    from envguard.errors import BadInputError

    with pytest.raises(BadInputError):
        verify_files(tmp_path)


def test_dangling_softlink_is_missing(make_prefix, tmp_path) -> None:
    """A softlinked environment whose cache copy was removed (conda#16614) must not pass."""
    import json
    import os

    from envguard.prefix.integrity import verify_files

    prefix = make_prefix(["python=3.11", "zlib=1.3.1"])
    record_path = next((prefix / "conda-meta").glob("zlib-*.json"))
    record = json.loads(record_path.read_text())
    entry = record["paths_data"]["paths"][0]
    target = tmp_path / "cache-copy"
    target.write_bytes((prefix / entry["_path"]).read_bytes())
    (prefix / entry["_path"]).unlink()
    os.symlink(target, prefix / entry["_path"])
    entry["path_type"] = "softlink"
    record_path.write_text(json.dumps(record))
    assert not verify_files(prefix).problems
    target.unlink()
    problems = verify_files(prefix).problems
    assert [(p.package, p.problem) for p in problems] == [("zlib-1.3.1-h4ab18f5_1", "missing")]
    assert "dangling symlink" in problems[0].detail


def _many_files_prefix(root: Path, packages: int, files: int) -> Path:
    """`packages` records of `files` small real files each, with their sha256 and size in paths_data."""
    for index in range(packages):
        folder = root / "share" / f"pkg{index}"
        folder.mkdir(parents=True)
        paths: list[dict[str, object]] = []
        for number in range(files):
            data = f"{index} {number}\n".encode()
            (folder / f"f{number}").write_bytes(data)
            entry = {"_path": f"share/pkg{index}/f{number}", "path_type": "hardlink", "sha256": sha(data)}
            paths.append({**entry, "size_in_bytes": len(data)})
        write_record(root, f"pkg{index}", paths)
    return root


def test_memory_stays_bounded_by_the_batches_in_flight(tmp_path: Path) -> None:
    """20,000 files: what verify_files holds at its peak is a few batches, not one object per file."""
    import tracemalloc

    prefix = _many_files_prefix(tmp_path / "env", 40, 500)
    victim = prefix / "share" / "pkg37" / "f499"
    replace_file(victim, b"x" * len(victim.read_bytes()))
    tracemalloc.start()
    try:
        report = verify_files(prefix)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.files == 20_000 and report.packages == 40
    assert [(p.path, p.problem) for p in report.problems] == [("share/pkg37/f499", "altered")]
    assert 0 < peak < 6 * 1024 * 1024, peak  # one Future and one object per file took ~25 MB


def test_small_large_and_boundary_sizes_are_hashed_exactly(tmp_path: Path) -> None:
    from envguard.prefix.integrity import CHUNK, SMALL

    prefix = tmp_path / "env"
    (prefix / "data").mkdir(parents=True)
    paths: list[dict[str, object]] = []
    sizes = (0, 1, SMALL - 1, SMALL, SMALL + 1, CHUNK, CHUNK + 1, 3 * CHUNK + 7)
    for size in sizes:
        data = bytes(i * 7 % 251 for i in range(size))
        (prefix / "data" / f"ok{size}").write_bytes(data)
        (prefix / "data" / f"bad{size}").write_bytes(data[:-1] + b"!" if size else b"")
        for name in (f"ok{size}", f"bad{size}"):
            paths.append(
                {"_path": f"data/{name}", "path_type": "hardlink", "sha256": sha(data), "size_in_bytes": size}
            )
    write_record(prefix, "sizes", paths)
    report = verify_files(prefix)
    assert report.files == 2 * len(sizes)
    assert sorted(p.path for p in report.problems) == sorted(f"data/bad{s}" for s in sizes if s)
    assert all("sha256" in p.detail for p in report.problems)
