"""W7 (issue 11): a lock's warnings are printed on every check, not only on the one that parsed it (the parse
cache kept them silent, even with --no-cache)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import envguard

LOCK = """version: 1
metadata:
  content_hash: {linux-64: abc}
  channels: [{url: conda-forge, used_env_vars: []}]
  platforms: [linux-64]
  sources: [environment.yml]
package:
- name: zlib
  version: 1.3.1
  manager: conda
  platform: linux-64
  dependencies: {}
  url: https://conda.anaconda.org/conda-forge/linux-64/zlib-1.3.1-h0_0.conda
  hash: {md5: 0123456789abcdef0123456789abcdef}
- name: extra
  version: '1.0'
  manager: conda
  platform: linux-64
  dependencies: {}
  url: https://conda.anaconda.org/conda-forge/linux-64/extra-1.0-h0_0.conda
  hash: {md5: 0123456789abcdef0123456789abcdef}
  category: dev
  optional: true
"""


def test_lock_warnings_on_every_check(tmp_path: Path, capsys) -> None:
    prefix = tmp_path / "env"
    (prefix / "conda-meta").mkdir(parents=True)
    record = {
        "name": "zlib",
        "version": "1.3.1",
        "build": "h0_0",
        "subdir": "linux-64",
        "depends": [],
        "channel": "https://conda.anaconda.org/conda-forge/linux-64",
        "url": "https://conda.anaconda.org/conda-forge/linux-64/zlib-1.3.1-h0_0.conda",
    }
    (prefix / "conda-meta" / "zlib-1.3.1-h0_0.json").write_text(json.dumps(record))
    lock = tmp_path / "conda-lock.yml"
    lock.write_text(LOCK)
    for _ in range(2):
        envguard("check", str(prefix), "--lock", str(lock), "--no-cache", "--platform", "linux-64")
        assert "optional (non-main category)" in capsys.readouterr().err


def test_a_checks_warnings_are_in_its_json(tmp_path: Path, capsys) -> None:
    """Issue 38: a warning belongs to the result: `--json` carries it (a `warnings` list) as well as stderr,
    and the human view keeps it on stderr."""
    prefix = tmp_path / "env"
    (prefix / "conda-meta").mkdir(parents=True)
    record = {
        "name": "zlib",
        "version": "1.3.1",
        "build": "h0_0",
        "subdir": "linux-64",
        "depends": [],
        "channel": "https://conda.anaconda.org/conda-forge/linux-64",
        "url": "https://conda.anaconda.org/conda-forge/linux-64/zlib-1.3.1-h0_0.conda",
    }
    (prefix / "conda-meta" / "zlib-1.3.1-h0_0.json").write_text(json.dumps(record))
    lock = tmp_path / "conda-lock.yml"
    lock.write_text(LOCK)
    argv = ("check", str(prefix), "--lock", str(lock), "--platform", "linux-64")
    assert envguard(*argv, "--json") == 0
    out, err = capsys.readouterr()
    warnings = json.loads(out)["warnings"]
    assert any("optional (non-main category)" in w for w in warnings), warnings
    assert "optional (non-main category)" in err
    assert envguard(*argv, "--no-cache") == 0
    out, err = capsys.readouterr()
    assert "optional (non-main category)" in err and "optional (non-main category)" not in out
