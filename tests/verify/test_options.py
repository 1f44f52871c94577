"""`envguard verify`'s options reach the verification (the CLI only parses and calls)."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from envguard.verify import run as verify_run
from tests.helpers import envguard


def test_every_verify_option_reaches_verify(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[verify_run.VerifyOptions] = []

    def record(
        options: verify_run.VerifyOptions, later: contextlib.ExitStack | None = None
    ) -> verify_run.VerifyResult:
        assert later is not None  # the CLI deletes the temporary prefix after printing
        seen.append(options)
        return verify_run.VerifyResult(
            lock=str(options.lock), platform="linux-64", prefix=None, kept=False, stages=()
        )

    monkeypatch.setattr(verify_run, "verify", record)
    lock = tmp_path / "conda-lock.yml"
    lock.write_text("version: 1\n")
    code = envguard(
        "verify",
        "--lock",
        str(lock),
        "--smoke",
        "--smoke-budget",
        "7.5",
        "--keep",
        "--pkgs-dir",
        str(tmp_path / "pkgs"),
        "--platform",
        "linux-64",
        "--json",
    )
    assert code == 0
    (options,) = seen
    assert options.smoke and options.keep and options.smoke_budget == 7.5
    assert options.platform == "linux-64" and options.pkgs_dir == tmp_path / "pkgs"
