"""torch's family (envguard.cuda.torch_family / family_problems): one release train and one build, told from
conda build strings (pytorch channel, conda-forge) and pip local versions; what cannot be told is never a
problem."""

from __future__ import annotations

import pytest

from envguard.cuda import family_problems, torch_family
from envguard.model import Package


def _pkg(name: str, version: str, build: str = "", manager: str = "conda") -> Package:
    return Package(name=name, version=version, build=build, manager=manager)


@pytest.mark.parametrize(
    ("packages", "problems"),
    [
        # the pytorch channel: one CUDA build, one release
        (
            [
                _pkg("pytorch", "2.1.0", "py3.11_cuda12.1_cudnn8.9.2_0"),
                _pkg("torchvision", "0.16.0", "py311_cu121"),
                _pkg("torchaudio", "2.1.0", "py311_cu121"),
            ],
            [],
        ),
        # conda-forge's builds
        (
            [
                _pkg("pytorch", "2.5.1", "cuda126_py311h0a1b2c3_300"),
                _pkg("torchvision", "0.20.1", "cuda126_py311hx_1"),
            ],
            [],
        ),
        (
            [_pkg("pytorch", "2.5.1", "cpu_generic_py311h_0"), _pkg("torchvision", "0.20.1", "cpu_py311h_1")],
            [],
        ),
        # a CPU-index torch beside PyPI's default torchvision, from the next release (issue 27's real case)
        (
            [_pkg("torch", "2.13.0+cpu", manager="pip"), _pkg("torchvision", "0.29.1", manager="pip")],
            [
                "torchvision 0.29.1 (pip) is not from torch 2.13's release (that is torchvision 0.28.x)",
                "torchvision 0.29.1 (pip) is PyPI's default wheel (a CUDA build on Linux x86-64), "
                "torch 2.13.0+cpu (pip) a CPU build",
            ],
        ),
        # two CUDA versions
        (
            [_pkg("torch", "2.4.0+cu121", manager="pip"), _pkg("torchaudio", "2.4.0+cu118", manager="pip")],
            ["torchaudio 2.4.0+cu118 (pip) is a CUDA 11.8 build, torch 2.4.0+cu121 (pip) a CUDA 12.1 build"],
        ),
        # torch 1.x trains: torchvision 0.(m+1), torchaudio 0.m
        ([_pkg("torch", "1.13.1", manager="pip"), _pkg("torchvision", "0.14.1", manager="pip")], []),
        (
            [_pkg("torch", "1.13.1", manager="pip"), _pkg("torchaudio", "0.12.1", manager="pip")],
            ["torchaudio 0.12.1 (pip) is not from torch 1.13's release (that is torchaudio 0.13.x)"],
        ),
        # a conda build whose kind cannot be told, beside a pip wheel: nothing said
        ([_pkg("pytorch", "2.1.0", "h123_0"), _pkg("torchvision", "0.16.0", manager="pip")], []),
    ],
)
def test_family_problems(packages: list[Package], problems: list[str]) -> None:
    assert list(family_problems(torch_family(packages))) == problems


def test_no_torch_no_family_and_conda_torch_first() -> None:
    assert torch_family([_pkg("torchvision", "0.16.0", "py311_cpu")]) == ()
    both = [_pkg("torch", "2.1.0+cpu", manager="pip"), _pkg("pytorch", "2.1.0", "py3.11_cpu_0")]
    (member,) = torch_family(both)
    assert (member.name, member.manager, member.build) == ("pytorch", "conda", "cpu")
