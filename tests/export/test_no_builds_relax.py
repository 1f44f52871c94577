"""`export --no-builds` (every package, version only, as `conda env export --no-builds` writes it, keeping a
CUDA build's choice) and `--relax major|minor` (`numpy=1.26.*` / `numpy=1.*`), against conda's own output and
with parse-back through rattler's MatchSpec and packaging's SpecifierSet."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from envguard.errors import UsageError
from envguard.export.pins import relax_conda_line, relax_pip_line, relaxed_version
from envguard.export.run import to_environment_yml
from envguard.prefix.reader import read_prefix
from tests.helpers import MakePrefix, envguard

REF = "reference/conda-outputs"


@pytest.fixture
def small(make_prefix: MakePrefix) -> Path:
    """python, numpy 1.26 and a CUDA pytorch from the fixture channels, without history."""
    return make_prefix(
        ["python=3.11", "numpy=1.26", "pytorch=2.1=*cuda11.8*"], name="small", cuda="12.4", history=False
    )


def _deps(text: str) -> list[str]:
    data: dict[str, Any] = yaml.safe_load(text)
    return [d for d in data["dependencies"] if isinstance(d, str)]


def test_no_builds_lists_every_package_like_conda(small: Path, shared: Path) -> None:
    env = read_prefix(small)
    lines = _deps(to_environment_yml(env, "full", no_builds=True).text)
    assert [line.split("=")[0] for line in lines] == [p.name for p in env.conda_packages()]
    for line, package in zip(lines, env.conda_packages(), strict=True):
        if "cuda11" in package.build:
            assert line == f"{package.name}={package.version}=*cuda11.8*", line
        else:
            assert line == f"{package.name}={package.version}", line
    # conda's own --no-builds file of the reference environment has the same shape: name=version, sorted
    conda = _deps((shared / REF / "env_export_nobuilds_rattler.yml").read_text())
    assert all(line.count("=") == 1 for line in conda) and conda == sorted(conda)


def test_relax_minor_and_major(small: Path) -> None:
    env = read_prefix(small)
    minor = _deps(to_environment_yml(env, "pinned", relax="minor").text)
    assert minor == ["python=3.11.*", "pytorch=2.1.*=*cuda11.8*"], minor  # the leaves, numpy comes with torch
    major = _deps(to_environment_yml(env, "full", no_builds=True, relax="major").text)
    assert "numpy=1.*" in major and "python=3.*" in major and "pytorch=2.*=*cuda11.8*" in major
    assert "# created-by" in to_environment_yml(env, "pinned", relax="minor").text
    assert (
        "(export --no-builds --relax major)"
        in to_environment_yml(env, "full", no_builds=True, relax="major").text
    )


@pytest.mark.parametrize(
    ("mode", "no_builds", "relax"),
    [
        ("pinned", True, None),
        ("from-history", True, None),
        ("from-history", False, "minor"),
        ("full", False, "major"),
    ],
)
def test_contradictory_options_are_refused(small: Path, mode: Any, no_builds: bool, relax: Any) -> None:
    with pytest.raises(UsageError):
        to_environment_yml(read_prefix(small), mode, no_builds=no_builds, relax=relax)


def test_cli_no_builds_and_relax(small: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "nb.yml"
    assert envguard("export", str(small), "--no-builds", "--relax", "minor", "-o", str(out)) == 0
    assert "numpy=1.26.*" in _deps(out.read_text())
    capsys.readouterr()
    assert envguard("export", str(small), "--pinned", "--no-builds") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--no-builds" in err and "Traceback" not in err
    assert envguard("export", str(small), "--format", "explicit", "--relax", "major") == 2
    assert envguard("export", str(small), "--relax", "patch") == 2


def test_relaxed_version_examples() -> None:
    assert relaxed_version("1.26.4", "minor") == "1.26.*"
    assert relaxed_version("1.26.4", "major") == "1.*"
    assert relaxed_version("2.13.0+cpu", "minor") == "2.13.*"
    assert relaxed_version("1!2.0.1", "minor") == "1!2.0.*"
    assert relaxed_version("2024a", "minor") == "2024a.*"
    assert relaxed_version("2", "minor") == "2.0.*"
    assert relax_conda_line("file:///c::six=1.16.0", "minor") == "file:///c::six=1.16.*"
    assert relax_conda_line("numpy[version='<2']", "minor") == "numpy[version='<2']"  # typed: as it was
    assert relax_conda_line("pip", "major") == "pip"
    assert relax_pip_line("six==1.16.0", "major") == "six==1.*"
    assert relax_pip_line("six @ https://host/six-1.16.0.whl", "major") == "six @ https://host/six-1.16.0.whl"


_SEGMENT = st.integers(min_value=0, max_value=300)


@given(st.lists(_SEGMENT, min_size=1, max_size=5), st.sampled_from(["major", "minor"]))
def test_a_relaxed_pin_still_matches_the_installed_version(parts: list[int], level: Any) -> None:
    """Property: the relaxed conda spec and the relaxed pip specifier both accept the version they relax, and
    a version with a higher kept segment is refused."""
    from rattler import MatchSpec, PackageRecord
    from rattler.package.build_string import BuildString

    version = ".".join(map(str, parts))
    conda_line = relax_conda_line(f"numpy={version}", level)
    pip_line = relax_pip_line(f"numpy=={version}", level)
    spec, specifier = MatchSpec(conda_line), SpecifierSet(pip_line.removeprefix("numpy"))
    kept = 1 if level == "major" else 2
    bumped = [*parts[:kept], *([0] * (kept - len(parts)))]
    bumped[kept - 1] += 1
    for candidate, accepted in ((version, True), (".".join(map(str, bumped)), False)):
        record = PackageRecord("numpy", candidate, BuildString("0"), 0, "noarch")
        assert spec.matches(record) is accepted, (conda_line, candidate)
        assert (Version(candidate) in specifier) is accepted, (pip_line, candidate)
