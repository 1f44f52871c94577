"""`%load_ext envguard` in a real IPython shell: `%envguard ARGS` runs the command in this process and gives
the same report as the console script (human and Markdown), bad input is one line and an exit code, the
kernel's own environment is the active one, and loading the extension imports nothing heavy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from envguard.notebook.shown import Shown

HEAVY = ("torch", "rattler", "rich", "psutil", "numpy", "deepdiff", "yaml", "matplotlib")


@pytest.fixture
def shell() -> Iterator[Any]:
    from IPython.core.interactiveshell import InteractiveShell

    ipython = InteractiveShell.instance()
    ipython.run_line_magic("load_ext", "envguard")
    yield ipython


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    envguard = Path(sys.executable).with_name("envguard")
    # os.environ, not the C environment, where readline (IPython's) set COLUMNS: the CLI into a pipe, as the
    # in-process magic (no terminal) sees it
    env = dict(os.environ)
    return subprocess.run([str(envguard), *argv], capture_output=True, text=True, check=False, env=env)


def test_check_in_ipython_reports_what_the_cli_reports(shell: Any, drifted: tuple[Path, Path]) -> None:
    prefix, lock = drifted
    shown = shell.run_line_magic("envguard", f"check {prefix} --lock {lock}")
    assert isinstance(shown, Shown) and shown.exit_code == 1
    cli = _cli("check", str(prefix), "--lock", str(lock))
    assert cli.returncode == 1
    assert shown.text() == cli.stdout + cli.stderr + f"(envguard check {prefix} --lock {lock}: exit 1)\n"
    assert "cpuonly 2.0" in shown.text() and "installed, not in the lock" in shown.text()
    markdown = _cli("check", str(prefix), "--lock", str(lock), "--markdown").stdout
    assert shown._repr_markdown_() == markdown + f"\n*envguard check {prefix} --lock {lock}: exit 1*\n"
    assert shown._repr_json_() is None
    as_json = shell.run_line_magic("envguard", f"check {prefix} --lock {lock} --json")
    assert as_json._repr_json_()["clean"] is False
    assert as_json._repr_json_()["schema_version"] == shown.data()[0]["schema_version"]


def test_data_is_the_json_whether_or_not_the_answer_was_cached(
    shell: Any, make_prefix: Any, tmp_path: Path
) -> None:
    prefix = make_prefix(["zlib"], name="clean")
    lock = tmp_path / "clean-lock.yml"
    assert _cli("lock", str(prefix), "--no-probe", "-o", str(lock)).returncode == 0
    first = shell.run_line_magic("envguard", f"check {prefix} --lock {lock} --json")
    again = shell.run_line_magic("envguard", f"check {prefix} --lock {lock} --json")  # the stored answer
    assert first.exit_code == again.exit_code == 0
    assert first.data()[0]["clean"] is True and again.data() == first.data()
    assert again._repr_json_() == first.data()[0] and "application/json" in again.bundle()


def test_bad_input_is_one_line_and_an_exit_code(shell: Any, tmp_path: Path) -> None:
    shown = shell.run_line_magic("envguard", f"check {tmp_path / 'nowhere'} --lock {tmp_path / 'x.yml'}")
    assert shown.exit_code == 2 and not shown.results
    assert shown.stderr.count("\n") == 1 and shown.stderr.startswith("envguard: error: ")
    assert "Traceback" not in shown.text()
    usage = shell.run_line_magic("envguard", "check --no-such-option")
    assert usage.exit_code == 2 and "No such option" in usage.stderr


def test_the_kernels_environment_is_the_active_one(
    shell: Any, make_prefix: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kernel inherits its Jupyter server's CONDA_PREFIX/VIRTUAL_ENV; the commands act on the environment
    the kernel runs in, and the variables are as they were afterwards."""
    elsewhere = make_prefix(["zlib"], name="server-env")
    monkeypatch.setenv("CONDA_PREFIX", str(elsewhere))
    monkeypatch.setenv("VIRTUAL_ENV", str(elsewhere))
    shown = shell.run_line_magic("envguard", "snapshot --no-probe")  # a file format: printed, not presented
    assert shown.exit_code == 0, shown.stderr
    assert Path(json.loads(shown.stdout)["prefix"]) == Path(sys.prefix)
    assert f"```text\n{shown.stdout[:20]}" in shown._repr_markdown_()
    assert os.environ["CONDA_PREFIX"] == os.environ["VIRTUAL_ENV"] == str(elsewhere)


def test_load_ext_imports_nothing_heavy() -> None:
    code = (
        "import sys\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "shell = InteractiveShell.instance()\n"
        "shell.run_line_magic('load_ext', 'envguard')\n"
        "assert 'envguard' in shell.magics_manager.magics['line']\n"
        "assert 'envguard_watch' in shell.magics_manager.magics['cell']\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


SLOW_LOADER = """\
import time
import torch
from torch.utils.data import DataLoader, Dataset

class Slow(Dataset):
    def __len__(self):
        return 240
    def __getitem__(self, i):
        time.sleep(0.01)  # the data: 40 ms a batch, against a 2 ms step
        return torch.zeros(4)

for batch in DataLoader(Slow(), batch_size=4, num_workers=0):
    time.sleep(0.002)
"""


def test_watch_cell_times_its_dataloader_and_leaves_torch_as_it_was(shell: Any) -> None:
    shown = shell.run_cell_magic("envguard_watch", "--interval 0.2", SLOW_LOADER)
    assert isinstance(shown, Shown)
    data = shown.data()[0]
    (loader,) = data["run"]["loaders"]
    assert loader["batches"] == 59 and loader["settings"]["num_workers"] == 0  # 60 batches, the first apart
    assert loader["data_wait_fraction"] > 0.5
    assert data["run"]["exit_code"] == 0 and data["run"]["pid"] == os.getpid()
    assert data["diagnosis"]["headline"] in shown._repr_markdown_()
    assert shown.text().startswith("envguard watch: %%envguard_watch")
    from torch.utils.data import dataloader

    assert dataloader._BaseDataLoaderIter.__next__.__qualname__ == "_BaseDataLoaderIter.__next__"
    failed = shell.run_cell_magic("envguard_watch", "", "raise ValueError('in the cell')\n")
    assert failed.data()[0]["run"]["exit_code"] == 1  # the traceback showed as usual
    bad = shell.run_cell_magic("envguard_watch", "--interval 0", "pass\n")
    assert bad.exit_code == 2 and bad.stderr.startswith("envguard: error: --interval 0: must be more than")


def test_a_result_shown_in_ipython_has_no_raw_control_character() -> None:
    """Issue 28: `%envguard` in a terminal IPython prints its text view; a name from a hostile input is
    escaped there as the console script escapes it."""
    from envguard.output import Views

    hostile = "zlib\x1b]52;c;cm0gLXJmIH4=\x07\u202e"
    views = Views(lambda: {"name": hostile}, lambda: f"name: {hostile}\n", lambda: f"**{hostile}**\n")
    shown = Shown(command="check", exit_code=1, results=((views, "human"), (views, "markdown")))
    for text in (shown.text(), shown._repr_markdown_()):
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
        assert "\\x1b" in text
