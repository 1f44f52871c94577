"""lock.plan's pure parts: which requests ask for CUDA, which pip lines can be locked without installing."""

from __future__ import annotations

from pathlib import Path

import pytest

from envguard.errors import BadInputError
from envguard.lock.plan import from_live, needs_cuda, pinned_pip_packages
from envguard.model import Package, RequestedSpec, make_environment


@pytest.mark.parametrize(
    ("spec", "asks"),
    [
        ("pytorch-cuda=11.8", True),
        ("pytorch=2.1=*cuda*", True),
        ("cudatoolkit", True),
        ("pytorch=2.1", False),
        ("cuda-version=12.1", True),
        ("numpy", False),
    ],
)
def test_needs_cuda(spec: str, asks: bool) -> None:
    assert (needs_cuda((RequestedSpec("conda", spec),)) == spec) is asks


def test_pip_wheels_with_cuda_in_the_version_ask_for_cuda() -> None:
    assert needs_cuda((RequestedSpec("pip", "torch==2.1.0+cu121"),)) == "torch==2.1.0+cu121"


def test_only_exact_pins_are_lockable_offline(tmp_path: Path) -> None:
    (six,) = pinned_pip_packages((RequestedSpec("pip", "Six==1.16.0"), RequestedSpec("conda", "x")), tmp_path)
    assert six == Package("pip", "six", "1.16.0")
    for line in ("requests>=2", "pkg @ https://host/pkg.whl", "numpy==1.*", "-e ."):
        with pytest.raises(BadInputError, match="cannot be locked without installing"):
            pinned_pip_packages((RequestedSpec("pip", line),), tmp_path)


def test_a_live_environment_is_locked_as_is_for_its_platform() -> None:
    env = make_environment(
        kind="prefix", platform="linux-64", packages=(Package("conda", "zlib", "1.3", "0"),)
    )
    plan = from_live(env)
    assert (
        list(plan.envs) == ["linux-64"]
        and plan.envs["linux-64"] is env
        and len(plan.content_hashes["linux-64"]) == 64
    )
