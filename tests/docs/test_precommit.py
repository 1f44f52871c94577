"""Every .pre-commit-config.yaml the docs give, run by the real `pre-commit` in a fresh git repository.

`envguard-lock-fresh` (language: python) is installed by pre-commit itself into its own virtualenv from a git
copy of this working tree (dependencies come from PyPI), so it proves the hook needs neither conda nor this
repo's venv. The `repo: local` variants (docs/pre-commit.md, docs/use-with-conda.md) run the envguard
installed from the clone (on PATH). A failing hook's fix line runs as printed, and the hook passes after it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.conftest import REPO, Block, blocks, git
from tests.helpers import MakePrefix, envguard, install, pip_install

pytestmark = pytest.mark.slow

PRE_COMMIT = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or shutil.which("pre-commit")
ENV_YML = "channels:\n  - {forge}\ndependencies:\n  - python=3.11\n  - zlib\n"
CONFIGS = [b for b in blocks(("yaml",)) if "repos:" in b.text]


def config(doc: str, kind: str) -> Block:
    """The doc's pre-commit config of that kind: `local` or `git`."""
    [found] = [b for b in CONFIGS if b.doc.name == doc and (("repo: local" in b.text) is (kind == "local"))]
    return found


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def _project(tmp_path: Path, channels: dict[str, Path], text: str) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q")
    (root / "environment.yml").write_text(ENV_YML.format(forge=channels["forge"].as_uri()))
    assert envguard("lock", "-f", "environment.yml", "--no-cuda", cwd=root) == 0
    (root / ".pre-commit-config.yaml").write_text(text + "\n")
    git(root, "add", "-A")
    return root


def _on_path() -> dict[str, str]:
    return dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")


def _pre_commit(root: Path, home: Path, hook: str, **extra_env: str) -> subprocess.CompletedProcess[str]:
    assert PRE_COMMIT, "pre-commit is a dev dependency"
    env = dict(_on_path(), PRE_COMMIT_HOME=str(home), PIP_DISABLE_PIP_VERSION_CHECK="1", **extra_env)
    return subprocess.run(
        [PRE_COMMIT, "run", hook, "--all-files", "--color", "never"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def _run_fix(root: Path, output: str) -> None:
    """The failing hook's `How to fix:` line, run as printed from the project's root."""
    fix = output.split("How to fix:\n", 1)[1].strip().splitlines()[0].strip()
    done = subprocess.run(["bash", "-c", fix], cwd=root, env=_on_path(), capture_output=True, text=True)
    assert done.returncode == 0, f"{fix}\n{done.stderr}"


def _stale(root: Path) -> None:
    envyml = root / "environment.yml"
    envyml.write_text(envyml.read_text().replace("  - zlib\n", "  - zlib\n  - six\n"))


def test_the_docs_give_three_configs() -> None:
    assert sorted((b.doc.name, "repo: local" in b.text) for b in CONFIGS) == [
        ("pre-commit.md", False),
        ("pre-commit.md", True),
        ("use-with-conda.md", True),
    ]


def test_lock_fresh_hook_in_its_own_environment(
    git_copy: tuple[Path, str], pre_commit_home: Path, channels: dict[str, Path], tmp_path: Path
) -> None:
    """docs/pre-commit.md's git snippet, pointed at a git copy of this tree (URL and COMMIT: the user's)."""
    source, rev = git_copy
    text = config("pre-commit.md", "git").text
    assert "repo: https://github.com/OWNER/envguard" in text and "rev: COMMIT" in text
    text = text.replace("https://github.com/OWNER/envguard", str(source)).replace("COMMIT", rev)
    root = _project(tmp_path, channels, text)
    done = _pre_commit(root, pre_commit_home, "envguard-lock-fresh")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "envguard lock is fresh" in done.stdout and "Passed" in done.stdout
    _stale(root)
    done = _pre_commit(root, pre_commit_home, "envguard-lock-fresh")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Failed" in done.stdout and "linux-64: six is not in the lock" in done.stdout
    # the hook ran envguard from pre-commit's virtualenv, not from this test's interpreter
    envs = [p for p in pre_commit_home.iterdir() if p.is_dir() and p.name.startswith("repo")]
    assert any(list(e.glob("py_env-*/bin/envguard")) for e in envs)
    _run_fix(root, done.stdout)
    done = _pre_commit(root, pre_commit_home, "envguard-lock-fresh")
    assert done.returncode == 0, done.stdout + done.stderr


def test_readme_local_hooks_run_the_installed_envguard(
    pre_commit_home: Path, make_prefix: MakePrefix, channels: dict[str, Path], tmp_path: Path
) -> None:
    """docs/pre-commit.md's `repo: local` snippet runs the envguard installed from the clone."""
    root = _project(tmp_path, channels, config("pre-commit.md", "local").text)
    done = _pre_commit(root, pre_commit_home, "envguard-lock-fresh")
    assert done.returncode == 0 and "envguard lock is fresh" in done.stdout, done.stdout + done.stderr
    _stale(root)
    done = _pre_commit(root, pre_commit_home, "envguard-lock-fresh")
    assert done.returncode == 1 and "How to fix:" in done.stdout, done.stdout + done.stderr
    relock = "envguard lock -f environment.yml --platform linux-64 --no-cuda -o conda-lock.yml"
    assert f'(cd "$(git rev-parse --show-toplevel)" && {relock})' in done.stdout  # the lock's Reproduce line
    _run_fix(root, done.stdout)
    assert _pre_commit(root, pre_commit_home, "envguard-lock-fresh").returncode == 0
    prefix = make_prefix(["python=3.11", "zlib"])
    assert envguard("lock", str(prefix), "--no-probe", "-o", str(root / "conda-lock.yml")) == 0
    done = _pre_commit(root, pre_commit_home, "envguard-check", CONDA_PREFIX=str(prefix))
    assert done.returncode == 0 and "envguard check" in done.stdout, done.stdout + done.stderr


def test_lock_fresh_on_the_readmes_main_job_passes(
    pre_commit_home: Path, make_prefix: MakePrefix, channels: dict[str, Path], tmp_path: Path
) -> None:
    """The README's main job locks a live environment; the lock-fresh hook has nothing to compare then, even
    with an exported environment.yml beside the lock (issue 26: it reported drift, or a missing file)."""
    prefix = make_prefix(["python=3.11", "zlib"])
    root = _project(tmp_path, channels, config("pre-commit.md", "local").text)
    assert envguard("lock", str(prefix), "--no-probe", cwd=root) == 0
    done = _pre_commit(root, pre_commit_home, "envguard-lock-fresh")
    assert done.returncode == 0, done.stdout + done.stderr
    assert envguard("export", str(prefix), "-o", "environment.yml", cwd=root) == 0  # the pair of one env
    done = _pre_commit(root, pre_commit_home, "envguard-lock-fresh")
    assert done.returncode == 0, done.stdout + done.stderr


def test_use_with_conda_hooks_check_the_named_environment(
    pre_commit_home: Path, channels: dict[str, Path], pkgs_cache: Path, tmp_path: Path, isolated_home: Path
) -> None:
    """docs/use-with-conda.md's hooks: the check names the project's environment (name:myproj), so a commit
    from a shell where another environment is active checks the right one."""
    root = _project(tmp_path, channels, config("use-with-conda.md", "local").text)
    envs = isolated_home / ".conda" / "envs"
    myproj = install(envs / "myproj", ["python=3.11", "zlib"], [channels["forge"]], cache=pkgs_cache)
    assert envguard("lock", "name:myproj", "--no-probe", "-o", "conda-lock.yml", cwd=root) == 0
    other = tmp_path / "other"
    done = _pre_commit(root, pre_commit_home, "envguard-check", CONDA_PREFIX=str(other))
    assert done.returncode == 0, done.stdout + done.stderr
    pip_install(myproj, str(channels["wheels"] / "other_pkg-0.3.0-py3-none-any.whl"))
    done = _pre_commit(root, pre_commit_home, "envguard-check", CONDA_PREFIX=str(other))
    assert done.returncode == 1 and "other-pkg (pip) 0.3.0" in done.stdout, done.stdout + done.stderr
    done = _pre_commit(root, pre_commit_home, "envguard-lock-fresh")  # a live lock: nothing to compare
    assert done.returncode == 0, done.stdout + done.stderr


def test_check_hook_against_the_active_environment(
    make_prefix: MakePrefix, pre_commit_home: Path, channels: dict[str, Path], tmp_path: Path
) -> None:
    """.pre-commit-hooks.yaml's envguard-check, used as a `repo: local` hook as it is defined there."""
    hooks = (REPO / ".pre-commit-hooks.yaml").read_text()
    assert "id: envguard-check" in hooks and "language: system" in hooks
    text = "repos:\n  - repo: local\n    hooks:\n" + "".join(
        f"      {line}\n" for line in _hook_block(hooks, "envguard-check").splitlines()
    )
    root = _project(tmp_path, channels, text)
    prefix = make_prefix(["python=3.11", "zlib"])
    assert envguard("lock", str(prefix), "--no-probe", "-o", str(root / "conda-lock.yml")) == 0
    done = _pre_commit(root, pre_commit_home, "envguard-check", CONDA_PREFIX=str(prefix))
    assert done.returncode == 0, done.stdout + done.stderr
    pip_install(prefix, str(channels["wheels"] / "other_pkg-0.3.0-py3-none-any.whl"))
    done = _pre_commit(root, pre_commit_home, "envguard-check", CONDA_PREFIX=str(prefix))
    assert done.returncode == 1 and "other-pkg (pip) 0.3.0" in done.stdout, done.stdout + done.stderr


def _hook_block(hooks: str, hook_id: str) -> str:
    """The `- id: ...` block of one hook from .pre-commit-hooks.yaml, as used by `repo: local`."""
    blocks = hooks.split("\n- id: ")
    [block] = [b for b in blocks if b.startswith(hook_id)]
    return "- id: " + block.strip()
