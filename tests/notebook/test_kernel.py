"""`%load_ext envguard` in a real Jupyter kernel (ipykernel, started by jupyter_client from the kernelspec
`create --jupyter` writes): `%envguard check` displays the drift the console script reports, as Markdown and
as text, and `%%envguard_watch` displays the diagnosis of a cell that iterates a DataLoader (torch imported
inside the watched cell)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from envguard.create import jupyter

pytestmark = pytest.mark.slow

LOADER = """\
%%envguard_watch --interval 0.2
import time
import torch
from torch.utils.data import DataLoader, Dataset

class Slow(Dataset):
    def __len__(self):
        return 240
    def __getitem__(self, i):
        time.sleep(0.01)
        return torch.zeros(4)

for batch in DataLoader(Slow(), batch_size=4, num_workers=0):
    time.sleep(0.002)
"""


@pytest.fixture
def kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A kernel of this interpreter's environment (ipykernel is a dev dependency), with envguard loaded."""
    from jupyter_client.manager import start_new_kernel

    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "jupyter-data"))
    _folder, warning = jupyter.install_kernelspec(Path(sys.prefix), "envguard dev")
    assert warning is None, warning
    manager, client = start_new_kernel(kernel_name="envguard-dev", startup_timeout=120)
    try:
        assert _run(client, "%load_ext envguard")[0]["status"] == "ok"
        yield client
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def _run(client: Any, code: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the reply's content, every execute_result and display_data content) of running `code`."""
    shown: list[dict[str, Any]] = []

    def on_output(message: dict[str, Any]) -> None:
        if message["msg_type"] in ("execute_result", "display_data"):
            shown.append(message["content"]["data"])

    reply = client.execute_interactive(code, output_hook=on_output, timeout=180)
    return reply["content"], shown


def test_check_in_a_kernel_shows_the_drift_the_cli_reports(kernel: Any, drifted: tuple[Path, Path]) -> None:
    prefix, lock = drifted
    reply, shown = _run(kernel, f"%envguard check {prefix} --lock {lock}")
    assert reply["status"] == "ok"
    (data,) = shown
    envguard = Path(sys.executable).with_name("envguard")
    argv = [str(envguard), "check", str(prefix), "--lock", str(lock)]
    # os.environ, not the C environment: readline (imported with the kernel client) sets COLUMNS there,
    # and the CLI would wrap its lines at that width where the notebook's view (no terminal) keeps them
    # whole
    env = dict(os.environ)
    human = subprocess.run(argv, capture_output=True, text=True, check=False, env=env)
    markdown = subprocess.run([*argv, "--markdown"], capture_output=True, text=True, check=False, env=env)
    assert human.returncode == markdown.returncode == 1
    assert data["text/markdown"] == markdown.stdout + f"\n*envguard check {prefix} --lock {lock}: exit 1*\n"
    assert data["text/plain"] == human.stdout + f"(envguard check {prefix} --lock {lock}: exit 1)"
    assert "cpuonly 2.0" in data["text/plain"]


def test_watch_cell_in_a_kernel_shows_the_diagnosis(kernel: Any) -> None:
    reply, shown = _run(kernel, LOADER)
    assert reply["status"] == "ok"
    markdown = [d["text/markdown"] for d in shown if "text/markdown" in d]
    assert len(markdown) == 1, shown
    assert markdown[0].startswith("### envguard watch: `%%envguard_watch`")
    assert "loader 0 (Slow): 59 batches" in markdown[0]


def test_the_report_shows_wherever_the_magic_stands_and_json_is_json(
    kernel: Any, drifted: tuple[Path, Path]
) -> None:
    """Mid-cell and assigned, the report is displayed (once); a cell ending in the result does not show it
    twice; `--json` is `application/json`, not a fenced text block."""
    prefix, lock = drifted
    reply, shown = _run(kernel, f"%envguard check {prefix} --lock {lock}\nx = 1")
    assert reply["status"] == "ok" and len(shown) == 1 and "cpuonly 2.0" in shown[0]["text/plain"]
    reply, shown = _run(kernel, f"r = %envguard check {prefix} --lock {lock}\nr.exit_code")
    assert reply["status"] == "ok" and len(shown) == 2  # the report, then the exit code
    assert "cpuonly 2.0" in shown[0]["text/markdown"] and shown[1]["text/plain"] == "1"
    reply, shown = _run(kernel, f"%envguard check {prefix} --lock {lock} --json")
    assert reply["status"] == "ok" and len(shown) == 1, shown
    (data,) = shown
    assert data["application/json"]["clean"] is False and "text/markdown" not in data
    reply, shown = _run(kernel, "r")
    assert reply["status"] == "ok" and len(shown) == 1  # shown again in a later cell


def test_ipython_script_prints_the_report(drifted: tuple[Path, Path], tmp_path: Path) -> None:
    """`ipython nb.ipy`: `%envguard check` of a drifted environment prints its report, as `%pip` prints."""
    prefix, lock = drifted
    script = tmp_path / "nb.ipy"
    check = f"%envguard check {prefix} --lock {lock}"
    script.write_text(f"%load_ext envguard\n{check}\nr = {check}\nprint('exit', r.exit_code)\n")
    ipython = Path(sys.executable).with_name("ipython")
    argv = [str(ipython), str(script)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("cpuonly 2.0") == 2 and "exit 1" in done.stdout, done.stdout
