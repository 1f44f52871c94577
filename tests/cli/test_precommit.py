"""Both pre-commit hooks in a real `pre-commit` run, in a temporary git repository.

`envguard-lock-fresh` (language: python) is installed by pre-commit itself into its own virtualenv from a git
copy of this working tree (dependencies come from PyPI), so it proves the hook needs neither conda nor this
repo's venv. `envguard-check` (language: system) runs the envguard on PATH against CONDA_PREFIX.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO, MakePrefix, envguard, pip_install

pytestmark = pytest.mark.slow

PRE_COMMIT = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or shutil.which("pre-commit")
ENV_YML = "channels:\n  - {forge}\ndependencies:\n  - python=3.11\n  - zlib\n"


def _git(cwd: Path, *args: str) -> str:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.org",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.org",
    )
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture(scope="session")
def envguard_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """This working tree (tracked and new files, not ignored ones) committed into a throwaway git
    repository."""
    target = tmp_path_factory.mktemp("envguard-src")
    listed = _git(REPO, "ls-files", "--cached", "--others", "--exclude-standard")
    for name in listed.splitlines():
        source = REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    _git(target, "init", "-q")
    _git(target, "add", "-A")
    _git(target, "commit", "-q", "-m", "envguard under test")
    return target, _git(target, "rev-parse", "HEAD")


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def _project(tmp_path: Path, channels: dict[str, Path], config: str) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    _git(root, "init", "-q")
    (root / "environment.yml").write_text(ENV_YML.format(forge=channels["forge"].as_uri()))
    assert (
        envguard("lock", "-f", str(root / "environment.yml"), "--no-cuda", "-o", str(root / "conda-lock.yml"))
        == 0
    )
    (root / ".pre-commit-config.yaml").write_text(config)
    _git(root, "add", "-A")
    return root


def _pre_commit(root: Path, home: Path, hook: str, **extra_env: str) -> subprocess.CompletedProcess[str]:
    assert PRE_COMMIT, "pre-commit is a dev dependency"
    env = dict(os.environ, PRE_COMMIT_HOME=str(home), PIP_DISABLE_PIP_VERSION_CHECK="1", **extra_env)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(
        [PRE_COMMIT, "run", hook, "--all-files", "--color", "never"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def readme_configs() -> list[str]:
    """The .pre-commit-config.yaml snippets of README's pre-commit section: `repo: local`, then git."""
    section = (REPO / "README.md").read_text().split("## pre-commit\n", 1)[1].split("\n## ", 1)[0]
    return [block + "\n" for block in re.findall(r"```yaml\n(.*?)\n```", section, re.DOTALL)]


def test_lock_fresh_hook_in_its_own_environment(
    envguard_repo: tuple[Path, str], pre_commit_home: Path, channels: dict[str, Path], tmp_path: Path
) -> None:
    """README's git snippet, pointed at a git copy of this tree (URL and COMMIT are the user's to fill)."""
    source, rev = envguard_repo
    config = readme_configs()[1]
    assert "repo: https://github.com/OWNER/envguard" in config and "rev: COMMIT" in config
    config = config.replace("https://github.com/OWNER/envguard", str(source)).replace("COMMIT", rev)
    root = _project(tmp_path, channels, config)
    done = _pre_commit(root, pre_commit_home, "envguard-lock-fresh")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "envguard lock is fresh" in done.stdout and "Passed" in done.stdout
    envyml = root / "environment.yml"
    envyml.write_text(envyml.read_text().replace("  - zlib\n", "  - zlib\n  - six\n"))
    done = _pre_commit(root, pre_commit_home, "envguard-lock-fresh")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Failed" in done.stdout and "linux-64: six is not in the lock" in done.stdout
    # the hook ran envguard from pre-commit's virtualenv, not from this test's interpreter
    envs = [p for p in pre_commit_home.iterdir() if p.is_dir() and p.name.startswith("repo")]
    assert any(list(e.glob("py_env-*/bin/envguard")) for e in envs)


def test_readme_local_hooks_run_the_installed_envguard(
    pre_commit_home: Path, make_prefix: MakePrefix, channels: dict[str, Path], tmp_path: Path
) -> None:
    """README's `repo: local` snippet works today with the envguard installed from the clone (on PATH)."""
    root = _project(tmp_path, channels, readme_configs()[0])
    done = _pre_commit(root, pre_commit_home, "envguard-lock-fresh")
    assert done.returncode == 0 and "envguard lock is fresh" in done.stdout, done.stdout + done.stderr
    envyml = root / "environment.yml"
    envyml.write_text(envyml.read_text().replace("  - zlib\n", "  - zlib\n  - six\n"))
    done = _pre_commit(root, pre_commit_home, "envguard-lock-fresh")
    assert done.returncode == 1 and "How to fix:" in done.stdout, done.stdout + done.stderr
    assert f"envguard lock -f {root / 'environment.yml'} -o {root / 'conda-lock.yml'}" in done.stdout
    prefix = make_prefix(["python=3.11", "zlib"])
    assert envguard("lock", str(prefix), "--no-probe", "-o", str(root / "conda-lock.yml")) == 0
    done = _pre_commit(root, pre_commit_home, "envguard-check", CONDA_PREFIX=str(prefix))
    assert done.returncode == 0 and "envguard check" in done.stdout, done.stdout + done.stderr


def test_check_hook_against_the_active_environment(
    make_prefix: MakePrefix, pre_commit_home: Path, channels: dict[str, Path], tmp_path: Path
) -> None:
    hooks = (REPO / ".pre-commit-hooks.yaml").read_text()
    assert "id: envguard-check" in hooks and "language: system" in hooks
    config = "repos:\n  - repo: local\n    hooks:\n" + "".join(
        f"      {line}\n" for line in _hook_block(hooks, "envguard-check").splitlines()
    )
    root = _project(tmp_path, channels, config)
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
