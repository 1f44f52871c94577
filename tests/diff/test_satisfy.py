"""Satisfaction (pure): an environment.yml's requests against resolved packages and their channels."""

from __future__ import annotations

from envguard.diff.satisfy import allowed_channels, channel_violations, diff_specs, unsatisfied
from envguard.model import Package, RequestedSpec, make_environment


def _env(*packages: Package) -> object:
    return make_environment(kind="conda-lock", source="lock", packages=packages)


NUMPY = Package("conda", "numpy", "1.26.4", "py311h0_0", channel="conda-forge")
SIX_PIP = Package("pip", "six", "1.16.0")
PYYAML_CONDA = Package("conda", "pyyaml", "6.0.1", "py311_0", channel="conda-forge")


def test_each_unmet_request_is_one_change_naming_what_is_installed() -> None:
    env = _env(NUMPY, SIX_PIP)
    wanted = (
        RequestedSpec("conda", "numpy>=2"),
        RequestedSpec("conda", "scipy"),
        RequestedSpec("pip", "six==1.16"),
    )
    changes = unsatisfied(wanted, env)  # type: ignore[arg-type]
    assert [(c.kind, c.name, c.b) for c in changes] == [
        ("unsatisfied", "numpy>=2", "numpy 1.26.4 py311h0_0 (conda-forge)"),
        ("unsatisfied", "scipy", "not installed"),
    ]


def test_a_pip_request_is_met_by_the_conda_package_of_that_project() -> None:
    env = _env(PYYAML_CONDA)
    assert unsatisfied((RequestedSpec("pip", "PyYAML>=6"),), env) == []  # type: ignore[arg-type]
    assert [c.kind for c in unsatisfied((RequestedSpec("pip", "-e ."),), env)] == ["unjudged"]  # type: ignore[arg-type]


def test_channels_defaults_expanded_nodefaults_dropped_and_channel_prefixes_allowed() -> None:
    specs = make_environment(
        kind="environment.yml",
        channels=("conda-forge", "nodefaults"),
        requested=(RequestedSpec("conda", "pytorch::pytorch"), RequestedSpec("conda", "numpy")),
    )
    assert allowed_channels(specs) == {"conda-forge", "pytorch"}
    from_alt = Package("conda", "numpy", "1.26.4", "0", channel="bioconda")
    (violation,) = channel_violations(specs, _env(from_alt))  # type: ignore[arg-type]
    assert violation.name == "numpy" and violation.b == "from bioconda"


def test_two_spec_files_compare_as_sets() -> None:
    a = make_environment(kind="environment.yml", source="a.yml", requested=(RequestedSpec("conda", "numpy"),))
    b = make_environment(kind="environment.yml", source="b.yml", requested=(RequestedSpec("conda", "scipy"),))
    diff = diff_specs(a, b)
    assert diff.mode == "specs" and {(c.kind, c.name) for c in diff.changes} == {
        ("only-a", "numpy"),
        ("only-b", "scipy"),
    }
