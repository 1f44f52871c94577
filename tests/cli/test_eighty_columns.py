"""`check`, `sync` and `verify` at COLUMNS=80 on a drifted environment whose channels have long URLs (issue
43): no line over 80 columns and nothing cut short with `…`; the printed fix commands wrap with the shell's
line continuation, so they still paste and run as printed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers import envguard, install

BASE = ["python=3.11", "numpy=1.26", "zlib"]
CUDA = "pytorch=2.1.0=*cuda11.8*"
CPU = "pytorch=2.1.0=*cpu*"


@pytest.fixture
def drifted(channels: dict[str, Path], pkgs_cache: Path, tmp_path: Path) -> tuple[Path, Path, list[str]]:
    """(prefix, lock, the channel URLs): a CUDA build of pytorch locked, the CPU build installed since; the
    channels copied under a long folder, as a mirror on a shared disk would be."""
    deep = tmp_path / "shared-disk" / "a-team-channel-mirror-with-a-long-name" / "nightly-builds"
    mirrors = []
    for name in ("forge", "pytorch"):
        shutil.copytree(channels[name], deep / name)
        mirrors.append(deep / name)
    prefix = tmp_path / "envs" / "a-project-training-environment"
    install(prefix, [*BASE, CUDA], mirrors, cache=pkgs_cache, cuda="12.4")
    lock = tmp_path / "project" / "conda-lock.yml"
    lock.parent.mkdir()
    assert envguard("lock", str(prefix), "--no-probe", "-o", str(lock)) == 0
    install(prefix, [*BASE, CPU], mirrors, cache=pkgs_cache)
    return prefix, lock, [m.resolve().as_uri() for m in mirrors]


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = envguard(*argv)
    return code, capsys.readouterr().out


def _fits(out: str) -> None:
    """Every line within 80 columns (but a single word longer than that); no `…`."""
    long = [line for line in out.splitlines() if len(line) > 80 and " " in line.strip().removesuffix(" \\")]
    assert not long, "\n".join(long)
    assert "…" not in out


def test_check_sync_and_verify_fit_80_columns(
    drifted: tuple[Path, Path, list[str]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    prefix, lock, urls = drifted
    assert len(urls[1]) > 80 - len("  [drift] pytorch 2.1.0 ()")  # the channel cannot share a line
    monkeypatch.setenv("COLUMNS", "80")

    code, out = _run(capsys, "check", str(prefix), "--lock", str(lock))
    assert code == 1, out
    _fits(out)
    fixes = out.split("How to fix:\n", 1)[1].replace(" \\\n", " ").splitlines()  # the continuations joined
    assert fixes and all(line.startswith("  envguard ") for line in fixes), fixes
    flat = "".join(out.split())  # a wrapped line joined again
    assert "[drift]pytorch2.1.0(" + urls[1] + "):py3.11_cuda11.8_cudnn8.7.0_0inthelock→py3.11_cpu_0" in flat
    torch = flat.split("[drift]pytorch2.1.0", 1)[1].split("[drift]", 1)[0]
    assert torch.count(urls[1]) == 1  # the channel both sides share, said once

    code, out = _run(capsys, "sync", str(prefix), "--lock", str(lock), "--dry-run")
    _fits(out)
    flat = "".join(out.split())
    assert "py3.11_cuda11.8_cudnn8.7.0_0" in flat and urls[1] in flat and "Dryrun" in flat

    code, out = _run(capsys, "verify", "--lock", str(lock))
    assert code == 0, out
    _fits(out)
    assert str(lock) in "".join(out.split()) and "PASS" in out


def test_into_a_pipe_each_finding_is_one_line(
    drifted: tuple[Path, Path, list[str]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No COLUMNS, stdout not a terminal: a finding stays one line, for grep."""
    prefix, lock, urls = drifted
    monkeypatch.delenv("COLUMNS", raising=False)
    code, out = _run(capsys, "check", str(prefix), "--lock", str(lock))
    [line] = [line for line in out.splitlines() if line.startswith("  [drift] pytorch 2.1.0")]
    assert code == 1 and line.endswith("installed (build changed)") and urls[1] in line
