"""SOURCE is resolved once into a Source value; the active environment's precedence is documented and
tested."""

from __future__ import annotations

from pathlib import Path

import pytest

from envguard import sources
from envguard.config import active_prefix
from envguard.prefix import condaconfig
from tests.helpers import MakePrefix, envguard


def test_active_environment_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    venv, conda = tmp_path / "venv", tmp_path / "conda"
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.setenv("CONDA_PREFIX", str(conda))
    assert active_prefix() == str(conda)
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))  # a venv activated inside a conda environment wins
    assert active_prefix() == str(venv)
    assert sources.resolve(None) == sources.Source(None, venv, True)


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
