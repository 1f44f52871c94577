"""`create --jupyter`'s kernelspec under a real Jupyter: jupyter_client's KernelSpecManager finds the kernel
envguard registered and a kernel started from it runs code in the target environment (a venv with ipykernel
from PyPI); the fallback writer picks the folder jupyter_core picks and writes the same bytes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from envguard.create import jupyter


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "jupyter-data"
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(folder))
    return folder


@pytest.fixture
def ipykernel_venv(tmp_path: Path) -> Path:
    """A real venv with ipykernel installed by pip from the index."""
    venv = tmp_path / "kv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "ipykernel"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"ipykernel cannot be installed from the index here: {done.stderr[-300:]}")
    return venv


@pytest.mark.slow
def test_kernelspec_manager_finds_the_kernel_and_it_runs_in_the_venv(
    ipykernel_venv: Path, data_dir: Path
) -> None:
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import start_new_kernel

    folder, warning = jupyter.install_kernelspec(ipykernel_venv, "Kernel Venv")
    assert warning is None, warning
    assert folder == data_dir / "kernels" / "kernel-venv"
    manager = KernelSpecManager()
    assert Path(manager.find_kernel_specs()["kernel-venv"]) == folder
    spec = manager.get_kernel_spec("kernel-venv")
    assert Path(spec.argv[0]) == ipykernel_venv / "bin" / "python"
    assert spec.display_name == "Python (Kernel Venv)"
    kernel, client = start_new_kernel(kernel_name="kernel-venv", startup_timeout=120)
    try:
        printed: list[str] = []

        def on_output(message: dict[str, object]) -> None:
            content = message.get("content")
            if message["msg_type"] == "stream" and isinstance(content, dict):
                printed.append(str(content["text"]))

        reply = client.execute_interactive(
            "import sys; print(sys.prefix)", output_hook=on_output, timeout=120
        )
        assert reply["content"]["status"] == "ok"
        assert "".join(printed).strip() == str(ipykernel_venv)
    finally:
        client.stop_channels()
        kernel.shutdown_kernel(now=True)


@pytest.mark.parametrize("variable", ["JUPYTER_DATA_DIR", "XDG_DATA_HOME", None])
def test_fallback_writer_matches_jupyter(
    variable: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jupyter_core.paths import jupyter_data_dir

    monkeypatch.delenv("JUPYTER_DATA_DIR", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    if variable:
        monkeypatch.setenv(variable, str(tmp_path / variable.lower()))
    assert jupyter.own_data_dir() == Path(jupyter_data_dir()) == jupyter.data_dir()
    text = jupyter.spec_text(jupyter.kernel_spec(Path("/envs/a/bin/python"), "a", Path("/envs/a")))
    theirs = jupyter.install_with_jupyter(text, "a")
    assert theirs is not None
    expected = (theirs / "kernel.json").read_bytes()
    (theirs / "kernel.json").unlink()
    ours = jupyter.write_own(text, "a")
    assert ours == theirs and (ours / "kernel.json").read_bytes() == expected == text.encode()
