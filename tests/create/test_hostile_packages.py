"""Packages whose paths.json points outside the environment (issue 28, finding 9): rattler panicked ("All
inserted paths must be relative", then "Rayon: detected unexpected panic; aborting"), exit 134 with a Rust
backtrace and no cleanup; with --force the env was replaced by an empty one and the original left hidden.
Now: exit 2, one line naming the package, nothing written, the original untouched."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import envguard, fixture_channel, hostile_channel, prefix_tree


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "envguard", *argv], capture_output=True, text=True, timeout=300, check=False
    )


@pytest.mark.parametrize("where", ["absolute", "parent"])
def test_a_package_installing_outside_the_prefix_is_refused_and_force_keeps_the_old_env(
    channels: dict[str, Path], tmp_path: Path, isolated_home: Path, where: str
) -> None:
    outside = tmp_path / "outside" / "evil.txt"
    escape = str(outside) if where == "absolute" else "../../../outside/evil.txt"
    channel = hostile_channel(channels["forge"], tmp_path, escape)
    envs = isolated_home / ".conda" / "envs"
    work = envs / "work"
    forge = channels["forge"].resolve().as_uri()
    assert envguard("create", "-c", forge, "python=3.11", "zlib", "-n", "work") == 0
    before = prefix_tree(work)
    uri = channel.resolve().as_uri()
    for extra in ([], ["--force"]):
        done = _run(
            "create", "-c", uri, "python=3.11", "zlib=1.3.1", "-n", "work" if extra else "new", *extra
        )
        assert done.returncode == 2, done.stderr[-2000:]
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, done.stderr[-2000:]
        assert (
            "zlib 1.3.1" in lines[0] and "outside the environment" in lines[0] and "panicked" not in lines[0]
        )
        assert not outside.exists()
        assert prefix_tree(work) == before
        assert sorted(p.name for p in envs.iterdir()) == ["work"]


def test_a_full_disk_leaves_no_half_prefix(
    tmp_path: Path, tiny_disk: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Finding 8: after ENOSPC rattler kept linking while envguard deleted the target, leaving a folder
    without conda-meta that `create -p` then refused even with --force."""
    channel = tmp_path / "big"
    for n in range(4):
        blobs = {f"share/blob{n}/part{k}.bin": f"{n}{k}" * 150_000 for k in range(3)}  # 900 kB a package
        recipe = fixture_channel.Recipe(f"blob{n}", "1.0", "h0_0", files=blobs)
        fixture_channel.build_package(recipe, channel)
    fixture_channel.index(channel)
    uri = channel.resolve().as_uri()
    target = tiny_disk / "env"
    for _round in range(3):
        capsys.readouterr()
        assert envguard("create", "-c", uri, "blob0", "blob1", "blob2", "blob3", "-p", str(target)) == 3
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "No space left on device" in err[0], err
        assert sorted(p.name for p in tiny_disk.iterdir()) == [], "a half prefix or a leftover stayed"
    assert envguard("create", "-c", uri, "blob0", "-p", str(target)) == 0  # what fits is created
    assert (target / "conda-meta").is_dir()


def test_a_panic_while_rattler_downloads_is_one_line_and_force_keeps_the_old_env(
    channels: dict[str, Path], tmp_path: Path, isolated_home: Path
) -> None:
    """Item 5: from a remote channel rattler downloads and extracts the archive itself, so nothing can check
    its paths.json first; the link runs in a child process and a panic there is exit 3 in one line."""
    from tests.channel_server import serve

    channel = hostile_channel(channels["forge"], tmp_path, str(tmp_path / "outside" / "evil.txt"))
    work = isolated_home / ".conda" / "envs" / "work"
    assert (
        envguard("create", "-c", channels["forge"].resolve().as_uri(), "python=3.11", "zlib", "-n", "work")
        == 0
    )
    before = prefix_tree(work)
    with serve(channel.parent) as base:
        url = f"{base}/{channel.name}"
        # first rattler downloads and extracts it (in a child, which panics); then the cache holds it,
        # extracted, and its paths.json is checked before linking: bad input
        for extra, code, said in (
            ([], 3, "a Rust panic: All inserted paths must be relative"),
            (["--force"], 2, "zlib 1.3.1 h4ab18f5_1: its paths.json installs"),
        ):
            done = _run(
                "create", "-c", url, "python=3.11", "zlib=1.3.1", "-n", "work" if extra else "new", *extra
            )
            assert done.returncode == code, done.stderr[-2000:]
            lines = done.stderr.strip().splitlines()
            assert len(lines) == 1 and said in lines[0], lines
            assert "s3cr3t" not in lines[0] and "tok-" not in lines[0]
            assert prefix_tree(work) == before
            assert sorted(p.name for p in work.parent.iterdir()) == ["work"]


@pytest.mark.parametrize("owned", ["conda-meta/numpy-9.9.9-fake_0.json", "etc/envguard/lock.json"])
def test_a_package_writing_where_envguard_and_conda_keep_their_records_is_refused(
    channels: dict[str, Path], tmp_path: Path, isolated_home: Path, owned: str
) -> None:
    """Issue 42: a hash-verified package shipping conda-meta/numpy-9.9.9-fake_0.json was linked by sync: a
    fake numpy became "installed" and check and sync sent the user round in a loop. A package may not write
    conda's records or envguard's: refused before linking, naming the package, by create and by sync."""
    channel = hostile_channel(channels["forge"], tmp_path, owned)
    uri, forge = channel.resolve().as_uri(), channels["forge"].resolve().as_uri()
    work = isolated_home / ".conda" / "envs" / "work"
    done = _run("create", "-c", uri, "python=3.11", "zlib=1.3.1", "-n", "new")
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "zlib 1.3.1" in lines[0] and owned in lines[0], lines
    assert not (isolated_home / ".conda" / "envs" / "new").exists()
    # sync: the environment lacks zlib; its lock (made from the hostile channel) has it
    assert envguard("create", "-c", forge, "python=3.11", "-n", "work") == 0
    yml = tmp_path / "environment.yml"
    yml.write_text(f"channels:\n  - {uri}\ndependencies:\n  - python=3.11\n  - zlib=1.3.1\n")
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", "-f", str(yml), "--no-cuda", "-o", str(lock)) == 0
    before = prefix_tree(work)
    done = _run("sync", str(work), "--lock", str(lock), "--yes")
    assert done.returncode == 2, done.stderr[-2000:]
    assert "zlib 1.3.1" in done.stderr and owned in done.stderr, done.stderr[-2000:]
    assert prefix_tree(work) == before
    assert not (work / "conda-meta" / "numpy-9.9.9-fake_0.json").exists()
