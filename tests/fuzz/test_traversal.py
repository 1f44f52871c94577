"""Hostile lock identities against the installers (issue 28, findings 4 and 9): names, versions and builds
made of traversal pieces (`..`, separators, absolute paths, NUL, encoded dots) with the hashes of a real
archive. `create --lock` and `verify` end 0, 2 or 3 in one line, never 4, and nothing outside the target, the
package cache and envguard's own caches changes."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import envguard

PIECES = st.sampled_from(
    [
        "..",
        "../",
        "/",
        "./",
        ".",
        "\\",
        "%2e%2e%2f",
        "..%2f",
        "/tmp/",
        "~",
        "\x00",
        "zlib",
        "victim",
        "-",
        "_",
    ]
)
HOSTILE = st.lists(PIECES | st.text("az09._-", max_size=4), min_size=1, max_size=6).map("".join)
# the target, its lock and journal, its envs dir, the registry, the package cache and envguard's caches
ALLOWED = (
    ".conda/envs/evil",
    ".conda/envs/.evil.",
    ".cache",
    ".conda/environments.txt",
    ".conda/.environments.txt",
)


def _state(root: Path) -> dict[str, str]:
    """Every path under root (not following symlinks) with its content digest, except where create and
    verify may write."""
    found: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            if rel.startswith(ALLOWED) or rel in (".conda", ".conda/envs") or "/pkgs" in f"/{rel}":
                continue
            found[rel] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
    return found


def _lock(path: Path, archive: Path, name: str, version: str, build: str) -> None:
    data = archive.read_bytes()
    url = f"{archive.parent.as_uri()}/{name}-{version}-{build}.conda"
    text = (
        "version: 1\nmetadata:\n  content_hash: {linux-64: x}\n"
        f"  channels: [{{url: '{archive.parent.parent.as_uri()}', used_env_vars: []}}]\n"
        "  platforms: [linux-64]\n  sources: []\npackage:\n"
        f"- name: {_quoted(name)}\n  version: {_quoted(version)}\n  build: {_quoted(build)}\n"
        "  manager: conda\n  platform: linux-64\n  dependencies: {}\n"
        f"  url: {_quoted(url)}\n  hash:\n    md5: {hashlib.md5(data).hexdigest()}\n"
        f"    sha256: {hashlib.sha256(data).hexdigest()}\n"
    )
    path.write_text(text, encoding="utf-8", errors="surrogatepass")


def _quoted(value: str) -> str:
    import json

    return json.dumps(value)  # a JSON string is a YAML double-quoted scalar, escapes and all


@settings(max_examples=40)
@given(HOSTILE, st.sampled_from(["name", "version", "build"]), st.sampled_from(["create", "verify"]))
def test_hostile_identities_write_nothing_outside(
    channels: dict[str, Path], tmp_path_factory: Any, capsys: Any, hostile: str, field: str, command: str
) -> None:
    home = Path(os.environ["HOME"])
    sandbox = tmp_path_factory.mktemp("sandbox")
    for victim in ("victim-1.3.1-h4ab18f5_1.json", "zlib-1.3.1-h4ab18f5_1.json"):
        for folder in (home, home / ".conda", sandbox):
            folder.mkdir(parents=True, exist_ok=True)
            (folder / victim).write_text('{"precious": true}\n')
    archive = channels["forge"] / "linux-64" / "zlib-1.3.1-h4ab18f5_1.conda"
    identity = {"name": "zlib", "version": "1.3.1", "build": "h4ab18f5_1", field: hostile}
    lock = sandbox / "conda-lock.yml"
    _lock(lock, archive, identity["name"], identity["version"], identity["build"])
    before = (_state(home), _state(sandbox))
    capsys.readouterr()
    if command == "create":
        code = envguard("create", "--lock", str(lock), "-n", "evil", "--force")
    else:
        code = envguard("verify", "--lock", str(lock), "--pkgs-dir", str(home / ".cache" / "pkgs"))
    err = capsys.readouterr().err
    assert code in (0, 1, 2, 3), err
    assert "Traceback" not in err and "internal error" not in err, err
    assert len(err.strip().splitlines()) <= 1, err
    assert (_state(home), _state(sandbox)) == before
    shutil.rmtree(home / ".conda" / "envs" / "evil", ignore_errors=True)
