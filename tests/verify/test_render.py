"""verify's human view (pure): at 80 columns no line is longer and nothing is cut short with `…`; digests
whole, long details wrapped."""

from __future__ import annotations

import pytest

from envguard.check import CheckReport
from envguard.diff.changes import Difference
from envguard.model import Package
from envguard.verify.render import render
from envguard.verify.run import Mismatch, Stage, VerifyResult

CHANNEL = "file:///home/someone/projects/a-rather-long-project-name/channels/pytorch-nightly-mirror"
LOCK = "/home/someone/projects/a-rather-long-project-name/environments/training/conda-lock.yml"
TORCH = Package("conda", "pytorch", "2.1.0", "py3.11_cuda11.8_cudnn8.7.0_0", channel=CHANNEL)


def _result() -> VerifyResult:
    drift = Difference(
        "conda",
        "changed",
        "pytorch",
        f"2.1.0 py3.11_cuda11.8_cudnn8.7.0_0 ({CHANNEL})",
        f"2.1.0 py3.11_cpu_0 ({CHANNEL})",
        ("build",),
        (("build", "py3.11_cuda11.8_cudnn8.7.0_0", "py3.11_cpu_0"),),
        same=(("version", "2.1.0"), ("channel", CHANNEL)),
    )
    from envguard.check.report import finding

    return VerifyResult(
        lock=LOCK,
        platform="linux-64",
        prefix="/tmp/envguard-verify-abcdefgh/a-rebuilt-environment-with-a-long-name/prefix",
        kept=True,
        stages=(
            Stage("fetch", "ok", 1.25, f"12 archive(s) from {CHANNEL} and the package cache"),
            Stage("hashes", "failed", 0.5, "1 archive(s) do not match the lock's sha256"),
        ),
        mismatches=(Mismatch(TORCH, "sha256", "a" * 64, "b" * 64, "/pkgs/pytorch.conda"),),
        check=CheckReport(LOCK, "/envs/rebuilt", (finding(drift, "the lock"),)),
    )


@pytest.mark.parametrize("columns", [80, 100])
def test_fits_the_terminal_without_cutting(columns: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    text = render(_result())
    fixes = text.split("How to fix:\n", 1)[1].splitlines()  # commands: one line each, copied whole
    body = text.split("How to fix:\n", 1)[0].splitlines()
    assert all(len(line) <= columns for line in body), "\n".join(line for line in body if len(line) > columns)
    assert "…" not in text and "..." not in text
    assert "a" * 64 in text and "b" * 64 in text  # the digests whole
    flat = " ".join(line.strip() for line in body)
    assert "py3.11_cuda11.8_cudnn8.7.0_0" in flat and "py3.11_cpu_0" in flat
    assert all(line.startswith("  ") for line in fixes)
