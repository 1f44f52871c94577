"""The five bugs the restructuring issue reproduced, each pinned by a test that failed before its fix."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from envguard.channels import expand_channels
from envguard.check.report import virtual_findings
from envguard.config import tool_settings
from envguard.model import VirtualPackage, make_environment
from envguard.output import dumps
from tests.helpers import envguard


def test_channel_prefix_with_any_known_subdir_names_the_channel() -> None:
    """`conda-forge/linux-aarch64::numpy` comes from conda-forge, not from a channel named
    `.../linux-aarch64`."""
    for subdir in ("linux-aarch64", "linux-ppc64le", "win-arm64", "noarch"):
        assert expand_channels(["conda-forge"], [f"conda-forge/{subdir}::numpy"]) == ["conda-forge"]
    assert expand_channels([], ["bioconda/osx-arm64::samtools"]) == ["bioconda"]
    # a channel whose last path part is not a subdir is kept whole
    assert expand_channels([], ["https://host/chan/extra::x"]) == ["https://host/chan/extra"]


@pytest.mark.parametrize(
    ("mine", "wanted", "note"),
    [("12.4", "12.4.0", False), ("12.4.0", "12.4", False), ("12.2", "12.4", True), ("12.10", "12.9", False)],
)
def test_virtual_package_versions_compare_as_conda_versions(mine: str, wanted: str, note: bool) -> None:
    live = make_environment(kind="prefix", virtual_packages=(VirtualPackage("__cuda", mine),))
    target = make_environment(kind="conda-lock", virtual_packages=(VirtualPackage("__cuda", wanted),))
    assert bool(virtual_findings(live, target, "the lock")) is note


def test_toml_without_tomllib_reads_every_string_form(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On Python 3.10 (no tomllib) the pyproject is read by tomli, so a literal multi-line string is `x`."""
    monkeypatch.setitem(sys.modules, "tomllib", None)  # `import tomllib` now raises ImportError, as on 3.10
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text("[tool.envguard]\nlock = '''x'''\n")
    assert tool_settings(pyproject) == {"lock": "x"}
    pyproject.write_text('[tool.envguard]\nlock = "envs/conda-lock.yml"  # where\n[other]\nlock = "no"\n')
    assert tool_settings(pyproject) == {"lock": "envs/conda-lock.yml"}


def test_check_json_is_laid_out_like_every_other_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env_yml = tmp_path / "environment.yml"
    env_yml.write_text("name: x\nchannels: [conda-forge]\ndependencies: [python=3.11]\n")
    lock = tmp_path / "other.yml"
    lock.write_text("name: y\nchannels: [conda-forge]\ndependencies: [python=3.12]\n")
    capsys.readouterr()
    envguard("diff", str(env_yml), str(lock), "--json")
    diff_text = capsys.readouterr().out
    assert diff_text == dumps(json.loads(diff_text))
    envguard("check", "--lock-fresh", "--lock", str(tmp_path / "missing.yml"), "--json")
    capsys.readouterr()
    prefix = tmp_path / "venv"
    (prefix / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    (prefix / "pyvenv.cfg").write_text("version = 3.11.7\n")
    envguard("check", str(prefix), "-f", str(env_yml), "--json", "--no-cache")
    text = capsys.readouterr().out
    assert text == dumps(json.loads(text))


@pytest.mark.parametrize(
    ("a", "b", "less"),
    [
        ("12.4", "12.4.0", False),
        ("2.28", "2.17", False),
        ("1.9", "1.10", True),
        ("1.0a1", "1.0", True),
        ("1.0", "1.0a1", False),
        ("x!y", "1.0", True),
    ],
)
def test_version_order_is_condas(a: str, b: str, less: bool) -> None:
    from envguard.specs import version_less

    assert version_less(a, b) is less
