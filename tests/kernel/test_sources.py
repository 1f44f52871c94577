"""SOURCE is resolved once into a Source value; the active environment's precedence is documented and
tested."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from envguard import sources
from envguard.config import active_prefix
from envguard.prefix import condaconfig
from tests.helpers import MakePrefix, envguard


def test_active_environment_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    venv, conda = tmp_path / "venv", tmp_path / "conda"
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.delenv("CONDA_PREFIX", raising=False)
    assert active_prefix() is None  # never the prefix envguard runs from
    with pytest.raises(sources.BadInputError, match="none active"):
        sources.resolve(None)
    monkeypatch.setenv("CONDA_PREFIX", str(conda))
    assert active_prefix() == str(conda)
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))  # a venv activated inside a conda environment wins
    assert active_prefix() == str(venv)
    assert sources.resolve(None) == sources.Source(None, venv, True)


def test_the_projects_environment_is_the_one_meant_from_any_subfolder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`[tool.envguard] environment` names the project's environment, relative to its pyproject.toml; it
    wins over an activated one (conda's base is active in every shell), and a broken value is one line."""
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / ".venv").mkdir()
    pyproject = project / "pyproject.toml"
    pyproject.write_text('[tool.envguard]\nenvironment = ".venv"\n')
    deep = project / "src" / "pkg"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    monkeypatch.setenv("CONDA_PREFIX", str(tmp_path / "base"))
    assert active_prefix() == str(project / ".venv")
    assert sources.resolve(None) == sources.Source(None, project / ".venv", True)
    pyproject.write_text('[tool.envguard]\nenvironment = "name:proj"\n')
    assert active_prefix() == "name:proj"
    pyproject.write_text('[tool.envguard]\nenvironment = "gone"\n')
    with pytest.raises(sources.BadInputError, match=r"environment = 'gone' is not a folder"):
        active_prefix()
    pyproject.write_text("[tool.envguard]\nenvironment = 3\n")
    with pytest.raises(sources.BadInputError, match="must be a path or name:ENV string"):
        active_prefix()
    pyproject.write_text('[tool.envguard]\nlock = "conda-lock.yml"\n')  # no environment: the activated one
    assert active_prefix() == str(tmp_path / "base")


def test_envguard_inside_names_its_own_prefix_and_what_holds_it(tmp_path: Path) -> None:
    own = Path(sys.prefix)
    assert sources.envguard_inside(own) is not None
    assert sources.envguard_inside(own.parent) is not None  # removing it removes envguard
    assert sources.envguard_inside(Path(sys.base_prefix)) is not None  # the interpreter a venv runs on
    assert sources.envguard_inside(Path(sources.__file__).parent.parent) is not None  # its own code
    assert sources.envguard_inside(tmp_path) is None


def test_resolve_sniffs_a_file_once_and_refuses_what_does_not_exist(tmp_path: Path) -> None:
    yml = tmp_path / "spec.txt"  # named anything: the content decides
    yml.write_text("dependencies:\n  - python=3.11\n")
    resolved = sources.resolve(str(yml))
    assert (resolved.live, resolved.kind) == (False, "environment.yml")
    assert sources.load(resolved).kind == "environment.yml"
    with pytest.raises(sources.BadInputError, match="no such file or environment"):
        sources.resolve(str(tmp_path / "nothing"))


def test_check_name_env_reads_the_condarcs_once(
    make_prefix: MakePrefix, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    prefix = make_prefix(["python=3.11"], name="named")
    envguard("lock", str(prefix), "--no-probe", "-o", str(tmp_path / "conda-lock.yml"))
    monkeypatch.setenv("CONDA_ENVS_PATH", str(prefix.parent))
    calls: list[int] = []
    real = condaconfig.load_condarc

    def counting() -> dict[str, object]:
        calls.append(1)
        return real()

    monkeypatch.setattr(condaconfig, "load_condarc", counting)
    code = envguard("check", "name:named", "--lock", str(tmp_path / "conda-lock.yml"))
    assert code == 0
    assert len(calls) == 1, f"condarc read {len(calls)} times for one check of name:ENV"
