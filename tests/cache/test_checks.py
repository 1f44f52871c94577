"""The fast path's stat fingerprint (issue 11, W1/W2): a venv's pyvenv.cfg and interpreter count, symlinked
records and dist-infos are followed, and an unreliable stat means no fingerprint (the full check runs)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from envguard.cache import checks as statcache


def _touch_later(path: Path, text: str) -> None:
    before = os.stat(path).st_mtime_ns
    path.write_text(text)
    os.utime(path, ns=(before + 10**9, before + 10**9))


def test_a_venv_upgrade_changes_the_fingerprint(tmp_path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    first = statcache.stat_fingerprint(venv)
    assert first and "pyvenv.cfg" in first
    cfg = venv / "pyvenv.cfg"
    _touch_later(cfg, cfg.read_text().replace("version", "version_info", 1))  # what --upgrade rewrites
    assert statcache.stat_fingerprint(venv) != first


def test_the_interpreter_behind_the_venv_counts(tmp_path) -> None:
    home = tmp_path / "base" / "bin"
    home.mkdir(parents=True)
    (home / "python3").write_text("#!/bin/sh\n")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(f"home = {home}\nversion = 3.11.9\n")
    (venv / "bin" / "python").symlink_to(home / "python3")
    first = statcache.stat_fingerprint(venv)
    _touch_later(home / "python3", "#!/bin/sh\n# another build\n")  # the base interpreter was replaced
    assert statcache.stat_fingerprint(venv) != first


def test_an_edit_behind_a_symlinked_record_or_dist_info_changes_it(tmp_path) -> None:
    prefix = tmp_path / "env"
    meta = prefix / "conda-meta"
    meta.mkdir(parents=True)
    store = tmp_path / "elsewhere"
    store.mkdir()
    record = store / "zlib-1.3.1-h0_0.json"
    record.write_text(json.dumps({"name": "zlib", "version": "1.3.1"}))
    (meta / record.name).symlink_to(record)
    site = prefix / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    dist = store / "demo-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Name: demo\nVersion: 1.0\n")
    (site / dist.name).symlink_to(dist)
    first = statcache.stat_fingerprint(prefix)
    _touch_later(record, json.dumps({"name": "zlib", "version": "1.3.2"}))
    second = statcache.stat_fingerprint(prefix)
    assert second != first, "an edit behind a symlinked conda-meta record was missed"
    _touch_later(dist / "METADATA", "Name: demo\nVersion: 2.0\n")
    assert statcache.stat_fingerprint(prefix) != second, "an edit inside a symlinked dist-info was missed"


def test_no_fingerprint_means_no_cache_hit(tmp_path) -> None:
    material = statcache.material(tmp_path, [], {})
    statcache.store(material, "inputs", "", True, {"x": 1})
    assert statcache.lookup(material, "inputs", "") is None


def test_every_change_the_pip_reader_could_see_changes_it(tmp_path) -> None:
    site = tmp_path / "env" / "lib" / "python3.11" / "site-packages"
    dist = site / "demo-1.0.dist-info"
    dist.mkdir(parents=True)
    (tmp_path / "env" / "conda-meta").mkdir()
    (dist / "METADATA").write_text("Name: demo\nVersion: 1.0\n")
    (dist / "INSTALLER").write_text("pip\n")
    seen = {statcache.stat_fingerprint(tmp_path / "env")}

    def changed() -> bool:
        now = statcache.stat_fingerprint(tmp_path / "env")
        new = now not in seen
        seen.add(now)
        return new

    direct = dist / "direct_url.json"
    direct.write_text('{"url": "file:///src/demo"}')
    assert changed(), "a direct_url.json added"
    before = os.stat(direct)
    with open(direct, "r+") as handle:  # in place, same size, mtime put back: only ctime tells
        handle.write('{"url": "file:///src/omed"}')
    os.utime(direct, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert changed(), "direct_url.json edited in place"
    (dist / "INSTALLER").write_text("conda\n")
    assert changed(), "INSTALLER edited"
    (dist / "INSTALLER").unlink()
    assert changed(), "INSTALLER removed"
    (dist / "REQUESTED").write_text("")
    assert changed(), "a file added to the dist-info"
    (dist / "REQUESTED").rename(dist / "OTHER")
    assert changed(), "a file renamed in the dist-info"


def test_a_verdict_entry_round_trips_and_a_damaged_one_is_a_miss(tmp_path) -> None:
    material = statcache.material(tmp_path, [], {})
    outputs = {"human": "OK: ✓ matches\n", "json": '{"clean": true}\n', "markdown": "**OK**\n\n"}
    statcache.store(material, "inputs", "fp\nnewest 1", True, outputs)
    assert statcache.lookup(material, "inputs", "fp\nnewest 1") == outputs
    assert statcache.lookup(material, "inputs", "fp\nnewest 2") is None
    assert statcache.lookup(material, "other inputs", "fp\nnewest 1") is None
    entry = next(Path(statcache.cache_root()).glob("*.entry"))
    blob = entry.read_bytes()
    # truncated; another magic; a last field whose size overruns the file; an extra unpaired style
    other = blob.replace(b"envguard", b"envguarD", 1)
    for damaged in (blob[:-5], other, blob + b"7\nabc", blob + b"3\nabc\n"):
        entry.write_bytes(damaged)
        assert statcache.lookup(material, "inputs", "fp\nnewest 1") is None


def test_the_walk_by_descriptor_and_by_path_agree(tmp_path, monkeypatch) -> None:
    """Folders are scanned through a descriptor where the platform allows it; the fingerprint is the same as
    scanning by path (symlinked record and dist-info, a dangling link included)."""
    from envguard.cache import statsig

    prefix = tmp_path / "env"
    meta = prefix / "conda-meta"
    meta.mkdir(parents=True)
    (meta / "zlib-1.3.1-h0_0.json").write_text(json.dumps({"name": "zlib", "version": "1.3.1"}))
    (meta / "gone-1.0-0.json").symlink_to(tmp_path / "nowhere.json")
    (tmp_path / "six.json").write_text(json.dumps({"name": "six", "version": "1.16.0"}))
    (meta / "six-1.16.0-py_0.json").symlink_to(tmp_path / "six.json")
    site = prefix / "lib" / "python3.11" / "site-packages"
    for name in ("demo-1.0.dist-info", "other-2.0.dist-info"):
        (site / name).mkdir(parents=True)
        (site / name / "METADATA").write_text("Name: demo\n")
    (site / "linked-3.0.dist-info").symlink_to(site / "other-2.0.dist-info")
    (site / "x.pth").write_text(".\n")
    by_descriptor = statsig.stat_fingerprint(prefix)
    monkeypatch.setattr(statsig, "_open_dir", lambda folder: None)
    by_path = statsig.stat_fingerprint(prefix)
    assert by_descriptor and by_descriptor == by_path
