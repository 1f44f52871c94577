"""The CI workflows the docs give run as written: each `run:` step in order, in the step's shell, with the
actions around them stood in for by what they leave on a runner (the checkout: a project with
environment.yml and the conda-lock.yml solved from it; setup-python: a fresh venv with a current pip;
setup-miniconda: conda with its shell functions in a login shell; actions/cache: a miss). The install step
installs this checkout (its `OWNER`/`COMMIT` placeholders filled with a git copy of it).
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.docs.conftest import REPO, World, blocks

pytestmark = pytest.mark.slow


def workflow(doc: str) -> dict[str, Any]:
    """The doc's one YAML block that is a workflow (has `jobs:`)."""
    [block] = [b for b in blocks(("yaml",), (REPO / "docs" / doc,)) if re.search(r"^jobs:", b.text, re.M)]
    data = yaml.safe_load(block.text)
    assert isinstance(data, dict)
    return data


def run_steps(
    job: dict[str, Any], world: World, placeholders: dict[str, str], uses: dict[str, Callable[[dict], None]]
) -> list[tuple[str, int]]:
    """Each step in order, as GitHub runs them: a failed step skips the rest but for `if: always()`."""
    shell = job.get("defaults", {}).get("run", {}).get("shell", "bash --noprofile --norc -eo pipefail {0}")
    results: list[tuple[str, int]] = []
    failed = False
    for number, step in enumerate(job["steps"]):
        name = step.get("name") or step.get("uses") or f"step {number}"
        if failed and step.get("if") != "always()":
            continue
        if "uses" in step:
            action = step["uses"].split("@", 1)[0]
            assert action in uses, f"{name}: no stand-in for {action}"
            uses[action](step)
            continue
        script = step["run"]
        for placeholder, value in placeholders.items():
            script = script.replace(placeholder, value)
        path = world.cwd.parent / f"step-{number}.sh"
        path.write_text(script)
        argv = [*shell.replace("{0}", str(path)).split()]
        done = subprocess.run(
            argv,
            cwd=world.cwd,
            env=world.env,
            capture_output=True,
            text=True,
            timeout=900,
            stdin=subprocess.DEVNULL,
        )
        results.append((name, done.returncode))
        assert "Traceback" not in done.stderr, done.stderr
        if done.returncode != 0:
            failed = True
            print(f"step {name!r} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return results


def _no_op(step: dict[str, Any]) -> None:
    """actions/checkout: the world's folder is the checkout."""


def _cache_miss(world: World, expected: str) -> Callable[[dict[str, Any]], None]:
    def miss(step: dict[str, Any]) -> None:
        path = step["with"]["path"]
        assert path == expected, f"the cached folder {path} is not the one verify reads ({expected})"
        assert not Path(path.replace("~", str(world.home), 1)).exists()  # a fresh runner: nothing restored

    return miss


def test_github_actions_verify_workflow(
    make_world: Callable[[tuple[str, ...], str], World], placeholders: dict[str, str]
) -> None:
    data = workflow("github-actions.md")
    [job] = data["jobs"].values()
    world = make_world(("checkout",), "runner")
    summary = world.cwd.parent / "step-summary.md"
    world.env["GITHUB_STEP_SUMMARY"] = str(summary)

    def setup_python(step: dict[str, Any]) -> None:
        """A fresh Python of its own with a current pip on PATH (this interpreter's version: the one stated
        is checked below)."""
        venv = world.cwd.parent / "setup-python"
        subprocess.run(
            [sys.executable, "-m", "venv", "--upgrade-deps", str(venv)], check=True, capture_output=True
        )
        world.prepend_path(venv / "bin")

    steps = run_steps(
        job,
        world,
        placeholders,
        {
            "actions/checkout": _no_op,
            "actions/setup-python": setup_python,
            "actions/cache": _cache_miss(world, "~/.cache/envguard/pkgs"),
        },
    )
    assert steps and all(code == 0 for _name, code in steps), steps
    report = (world.cwd / "envguard-verify.md").read_text()
    assert "PASS" in report and summary.read_text() == report


def test_the_verify_workflow_says_which_python_to_set_up() -> None:
    """The runner's Python runs envguard; a venv's lock (pip packages only) is rebuilt with the Python it
    records, so the doc says to set that one (issue 26: 3.12 on the runner, 3.11 in the lock, exit 2)."""
    text = (REPO / "docs" / "github-actions.md").read_text()
    [job] = workflow("github-actions.md")["jobs"].values()
    [setup] = [s for s in job["steps"] if s.get("uses", "").startswith("actions/setup-python")]
    assert setup["with"]["python-version"]
    assert "the Python your lock records" in text


def test_conda_ci_workflow(
    make_world: Callable[[tuple[str, ...], str], World], placeholders: dict[str, str]
) -> None:
    data = workflow("use-with-conda.md")
    [job] = data["jobs"].values()
    world = make_world(("checkout", "conda", "pipx"), "runner")
    world.env.pop("CONDA_PREFIX", None)

    def setup_miniconda(step: dict[str, Any]) -> None:
        """What setup-miniconda leaves: `conda init bash` in the login profile (conda named by its path),
        and the runner's PATH kept by the login shell (this machine's /etc/profile resets it; a runner's
        does not)."""
        conda = world.env["PATH"].split(":")[0] + "/conda"
        profile = f'export PATH="{world.env["PATH"]}"\neval "$({conda} shell.bash hook)"\n'
        (world.home / ".bash_profile").write_text(profile)

    steps = run_steps(
        job,
        world,
        placeholders,
        {"actions/checkout": _no_op, "conda-incubator/setup-miniconda": setup_miniconda},
    )
    assert steps and all(code == 0 for _name, code in steps), steps
    assert "envguard check" in (world.cwd / "envguard-check.md").read_text()
