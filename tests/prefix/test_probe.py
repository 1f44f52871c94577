"""The fingerprint probe with real interpreters: this one (real numpy and torch), a bare venv, a hung one, a
crashing one."""

from __future__ import annotations

import hashlib
import json
import platform
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from envguard.errors import ProbeError
from envguard.prefix.probe import current_python_probe, run_probe
from tests.helpers import envguard

N = 10000


def _digest(values: list[int]) -> str:
    """The probe's documented fingerprint: SHA-256 over little-endian int64 values."""
    return hashlib.sha256(struct.pack(f"<{len(values)}q", *values)).hexdigest()


@pytest.mark.slow  # imports torch twice (here and in the probe): several seconds
def test_fingerprints_match_values_computed_in_process() -> None:
    np = pytest.importorskip("numpy")
    torch = pytest.importorskip("torch")
    from torch.utils.data import DataLoader

    found = current_python_probe()
    assert found.errors == ()
    assert found.python == platform.python_version()
    assert found.numpy_version == np.__version__ and found.torch_version == str(torch.__version__)
    assert found.numpy_legacy == _digest(np.random.RandomState(0).permutation(N).tolist())
    assert found.numpy_generator == _digest(np.random.default_rng(0).permutation(N).tolist())
    assert found.torch_randperm == _digest(
        torch.randperm(N, generator=torch.Generator().manual_seed(0)).tolist()
    )
    loader = DataLoader(
        list(range(1000)), batch_size=10, shuffle=True, generator=torch.Generator().manual_seed(0)
    )
    assert found.dataloader_order == _digest([int(i) for batch in loader for i in batch])
    assert found.torch_cuda == torch.version.cuda
    assert found.cuda_arch_list == tuple(torch.cuda.get_arch_list())
    if torch.version.cuda is None:
        assert found.cudnn is None and found.cuda_arch_list == ()
    # a different seed gives a different fingerprint: the digests are not constants
    assert found.numpy_legacy != _digest(np.random.RandomState(1).permutation(N).tolist())


def test_bare_venv_records_numpy_and_torch_as_absent(tmp_path: Path) -> None:
    venv = tmp_path / "bare"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True
    )
    found = run_probe(venv, timeout=60)
    assert found.python == platform.python_version()
    assert (found.numpy_version, found.numpy_legacy, found.torch_version, found.dataloader_order) == (
        None,
    ) * 4
    assert found.errors == () and found.cuda_arch_list == ()


@pytest.mark.slow
def test_conda_prefix_probe_through_snapshot(make_prefix: Any, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    prefix = make_prefix(["python=3.11", "numpy=1.26"])
    assert envguard("snapshot", str(prefix)) == 0
    data = json.loads(capsys.readouterr().out)
    fingerprints = data["fingerprints"]
    assert fingerprints["numpy_legacy"] == current_python_probe().numpy_legacy
    assert fingerprints["torch_randperm"] is not None and fingerprints["errors"] == []


def _fake_interpreter(prefix: Path, body: str) -> Path:
    (prefix / "bin").mkdir(parents=True)
    python = prefix / "bin" / "python"
    python.write_text("#!/bin/sh\n" + body)
    python.chmod(0o755)
    return prefix


def test_hung_interpreter_is_a_probe_error_within_the_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    prefix = _fake_interpreter(tmp_path / "hung", "sleep 30\n")
    (prefix / "pyvenv.cfg").write_text("version = 3.11.9\n")
    start = time.monotonic()
    with pytest.raises(ProbeError, match=r"did not finish within 1 s"):
        run_probe(prefix, timeout=1)
    assert time.monotonic() - start < 10
    monkeypatch.setenv("ENVGUARD_PROBE_TIMEOUT", "1")
    assert envguard("snapshot", str(prefix)) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ENVGUARD_PROBE_TIMEOUT" in err and "Traceback" not in err


def test_crashing_interpreter_is_a_probe_error(tmp_path: Path) -> None:
    prefix = _fake_interpreter(
        tmp_path / "crash", "echo 'Fatal Python error: init_fs_encoding' >&2\nexit 1\n"
    )
    with pytest.raises(ProbeError, match=r"probe failed \(Fatal Python error: init_fs_encoding\)"):
        run_probe(prefix, timeout=10)
    garbage = _fake_interpreter(tmp_path / "garbage", "echo 'ENVGUARD-PROBE-JSON: {not json'\n")
    with pytest.raises(ProbeError, match="unreadable output"):
        run_probe(garbage, timeout=10)
