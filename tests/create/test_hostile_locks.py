"""Locks that try to make create/verify write outside the target (issue 28, finding 4): a name such as
`../../victim` reached a path (the install-records step rewrote a JSON file elsewhere), and a lock whose name
differs from the archive it points at installed the archive's package with exit 0. Both are refused, exit 2,
naming the package, before anything is written; nothing outside the target changes."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from tests.channel_server import serve
from tests.helpers import envguard

ZLIB = "zlib-1.3.1-h4ab18f5_1.conda"


def _lock(path: Path, channel: str, entries: list[dict[str, str]]) -> Path:
    """A conda-lock.yml for linux-64 with these conda entries (name, version, build, url, file)."""
    lines = [
        "version: 1",
        "metadata:",
        "  content_hash: {linux-64: x}",
        f"  channels: [{{url: '{channel}', used_env_vars: []}}]",
        "  platforms: [linux-64]",
        "  sources: []",
        "package:",
    ]
    for entry in entries:
        data = Path(entry["file"]).read_bytes()
        lines += [
            f"- name: '{entry['name']}'",
            f"  version: '{entry['version']}'",
            f"  build: '{entry['build']}'",
            "  manager: conda",
            "  platform: linux-64",
            "  dependencies: {}",
            f"  url: '{entry['url']}'",
            "  hash:",
            f"    md5: {hashlib.md5(data).hexdigest()}",
            f"    sha256: {hashlib.sha256(data).hexdigest()}",
        ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _snapshot(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


@pytest.mark.parametrize("command", ["create", "verify"])
def test_a_traversing_name_with_correct_hashes_writes_nothing_outside(
    channels: dict[str, Path],
    tmp_path: Path,
    isolated_home: Path,
    capsys: pytest.CaptureFixture[str],
    command: str,
) -> None:
    envs = isolated_home / ".conda" / "envs"
    envs.mkdir(parents=True)
    victim = envs / "victim-1.3.1-h4ab18f5_1.json"  # where conda-meta/../../victim-1.3.1-....json lands
    victim.write_text('{"precious": true}\n')
    with serve(channels["forge"].parent) as base:
        url = base.split("@", 1)[0].split("//")[0] + "//" + base.split("@", 1)[1].split("/t/")[0]
        archive = channels["forge"] / "linux-64" / ZLIB
        lock = _lock(
            tmp_path / "conda-lock.yml",
            f"{url}/forge",
            [
                {
                    "name": "../../victim",
                    "version": "1.3.1",
                    "build": "h4ab18f5_1",
                    "url": f"{url}/forge/linux-64/{ZLIB}",
                    "file": str(archive),
                }
            ],
        )
        capsys.readouterr()
        if command == "create":
            code = envguard("create", "--lock", str(lock), "-n", "evil")
        else:
            code = envguard("verify", "--lock", str(lock), "--pkgs-dir", str(tmp_path / "pkgs"))
    err = capsys.readouterr().err
    assert code == 2, err
    assert "'../../victim' is not a conda package name" in err and str(lock) in err
    assert len(err.strip().splitlines()) == 1
    assert victim.read_text() == '{"precious": true}\n'
    assert sorted(p.name for p in envs.iterdir()) == [victim.name]


def test_a_lock_naming_another_package_than_its_archive_is_refused(
    channels: dict[str, Path], tmp_path: Path, isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The URL's file name agrees with the lock (zlibx-...), but the archive behind it is zlib's."""
    chan = tmp_path / "chan" / "linux-64"
    chan.mkdir(parents=True)
    renamed = chan / ZLIB.replace("zlib-", "zlibx-")
    shutil.copyfile(channels["forge"] / "linux-64" / ZLIB, renamed)
    lock = _lock(
        tmp_path / "conda-lock.yml",
        chan.parent.as_uri(),
        [
            {
                "name": "zlibx",
                "version": "1.3.1",
                "build": "h4ab18f5_1",
                "url": renamed.as_uri(),
                "file": str(renamed),
            }
        ],
    )
    before = _snapshot(tmp_path / "chan")
    capsys.readouterr()
    assert envguard("create", "--lock", str(lock), "-n", "other") == 2
    err = capsys.readouterr().err
    assert "zlibx 1.3.1 h4ab18f5_1" in err and "is zlib 1.3.1 h4ab18f5_1" in err, err
    assert not (isolated_home / ".conda" / "envs" / "other").exists()
    assert _snapshot(tmp_path / "chan") == before


@pytest.mark.parametrize(
    ("name", "version", "build", "file", "why"),
    [
        ("zlib", "1.3.1", "h4ab18f5_1", "urls.txt", "is not a package archive's file name"),
        ("zlib", "1.3.1/../..", "h4ab18f5_1", ZLIB, "is not a conda version"),
        ("zlib", "1.3.1", "h4ab18f5_1\nHow to fix:", ZLIB, "is not a conda build string"),
        ("zlib", "1.3.1", "h4ab18f5_1", ZLIB.replace("zlib", "libz"), "its URL names another archive"),
    ],
)
def test_identities_and_archive_names_outside_conda_rules_are_refused_at_read(
    channels: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    version: str,
    build: str,
    file: str,
    why: str,
) -> None:
    archive = channels["forge"] / "linux-64" / ZLIB
    url = f"https://example.invalid/forge/linux-64/{file}"
    lock = _lock(
        tmp_path / "conda-lock.yml",
        "https://example.invalid/forge",
        [{"name": name, "version": version, "build": build, "url": url, "file": str(archive)}],
    )
    for argv in (["diff", str(lock), str(lock)], ["create", "--lock", str(lock), "-n", "x"]):
        capsys.readouterr()
        assert envguard(*argv) == 2
        err = capsys.readouterr().err
        assert why in err and f"{lock}:" in err, err
        assert "\n" not in err.strip()
