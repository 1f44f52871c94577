"""An unsolvable environment.yml names its root cause: the virtual package the solve needs, what to pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import envguard


def test_a_cuda_build_without_cuda_names_cuda_and_what_to_pass(
    channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    yml = tmp_path / "environment.yml"
    yml.write_text(
        f"channels:\n  - {channels['pytorch'].as_uri()}\n  - {channels['forge'].as_uri()}\n"
        "dependencies:\n  - python=3.11\n  - pytorch=2.1.0=*cuda*\n"
    )
    capsys.readouterr()
    assert envguard("lock", "-f", str(yml), "--no-cuda", "-o", str(tmp_path / "conda-lock.yml")) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"envguard: error: {yml}: cannot solve for linux-64: ")
    assert "pytorch 2.1.0 would require" in line and "__cuda" in line
    assert "the virtual package(s) __cuda, which linux-64 was not given" in line and "--cuda VERSION" in line
