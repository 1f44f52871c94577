"""Spec matching and the CUDA summary."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envguard.cuda import describe, summarize
from envguard.model import Package, VirtualPackage
from envguard.specs import conda_matches, parse_conda, pip_matches, pip_name


def conda(name: str, version: str, build: str = "0", channel: str = "conda-forge", **kw: object) -> Package:
    return Package(manager="conda", name=name, version=version, build=build, channel=channel, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("spec", "package", "expected"),
    [
        ("numpy", conda("numpy", "1.26.4"), True),
        ("numpy=1.26", conda("numpy", "1.26.4"), True),
        ("numpy=1.26", conda("numpy", "1.27.0"), False),
        ("numpy>=1.21,<2", conda("numpy", "2.0.1"), False),
        ("numpy >=1.21, <2", conda("numpy", "1.26.4"), True),
        ("pytorch=2.1=*cuda*", conda("pytorch", "2.1.0", "py3.11_cuda11.8_cudnn8.7.0_0"), True),
        ("pytorch=2.1=*cuda*", conda("pytorch", "2.1.0", "py3.11_cpu_0"), False),
        ("conda-forge::numpy", conda("numpy", "1.26.4"), True),
        ("pytorch::numpy", conda("numpy", "1.26.4"), False),
        ("python==3.10", conda("python", "3.10.0"), True),
        ("catch2 =2", conda("catch2", "2.13.9"), True),
        ("openssl 1!3.0", conda("openssl", "1!3.0"), True),
        ("openssl 1!3.0", conda("openssl", "3.0"), False),
        ("numpy[build_number=3]", conda("numpy", "1.0", build_number=3), True),
        ("PyYAML", conda("pyyaml", "6.0"), True),
    ],
)
def test_conda_matches(spec: str, package: Package, expected: bool) -> None:
    assert conda_matches(spec, package) is expected


def test_parse_conda_canonical_and_channel() -> None:
    parsed = parse_conda("conda-forge::numpy>=1.21,<2")
    assert (
        parsed.name == "numpy"
        and parsed.channel == "conda-forge"
        and parsed.canonical() == "conda-forge::numpy >=1.21,<2"
    )


def test_pip_lines() -> None:
    pkg = Package(manager="pip", name="torch", version="2.4.0+cu121")
    assert pip_matches("torch==2.4.0+cu121", pkg) is True
    assert pip_matches("torch>=2.5", pkg) is False
    assert pip_matches("-e .", pkg) is None
    assert pip_name("Deeplabcut[gui,modelzoo]>=3") == "deeplabcut"
    assert pip_name("git+https://github.com/x/y.git#egg=My_Pkg") == "my-pkg"
    assert pip_name("-r requirements.txt") is None


def test_cuda_summary_from_conda_builds() -> None:
    pkgs = [
        conda("pytorch", "2.1.0", "py3.11_cuda11.8_cudnn8.7.0_0", "pytorch"),
        conda("cudatoolkit", "11.8.0"),
    ]
    summary = summarize(pkgs, [VirtualPackage("__cuda", "12.4")])
    assert (summary.driver, summary.toolkit, summary.torch_build, summary.torch_cuda) == (
        "12.4",
        "11.8",
        "cuda",
        "11.8",
    )
    assert "driver 12.4" in describe(summary)


@pytest.mark.parametrize(
    ("packages", "build", "cuda"),
    [
        ([conda("pytorch", "2.1.0", "py3.11_cpu_0")], "cpu", None),
        ([conda("pytorch", "2.1.0", "py3.11_0"), conda("cpuonly", "2.0")], "cpu", None),
        ([conda("pytorch", "2.1.0", "py3.11_0"), conda("pytorch-mutex", "1.0", "cuda")], "cuda", None),
        ([conda("pytorch", "2.3.1", "cuda120_py311h1234_300")], "cuda", "12.0"),
        ([Package(manager="pip", name="torch", version="2.4.0+cu121")], "cuda", "12.1"),
        ([Package(manager="pip", name="torch", version="2.13.0+cpu")], "cpu", None),
        (
            [
                Package(manager="pip", name="torch", version="2.4.0"),
                Package(manager="pip", name="nvidia-cuda-runtime-cu12", version="12.1.105"),
            ],
            "cuda",
            "12.1",
        ),
        ([conda("numpy", "1.26.4")], "absent", None),
    ],
)
def test_torch_build_kinds(packages: list[Package], build: str, cuda: str | None) -> None:
    summary = summarize(packages)
    assert summary.torch_build == build and summary.torch_cuda == cuda


_NAMES = st.sampled_from(
    [
        "cuda-version", "cudatoolkit", "cuda-runtime", "pytorch-cuda", "cuda", "pytorch", "torch",
        "pytorch-gpu", "pytorch-cpu", "pytorch-mutex", "cpuonly", "nvidia-cuda-runtime-cu12",
        "nvidia-cublas-cu11", "nvidia-x", "numpy", "python", "nvidia", "xnvidia-cuda-runtime",
    ]
)  # fmt: skip
_PACKAGES = st.lists(
    st.builds(
        Package,
        manager=st.sampled_from(["conda", "pip"]),
        name=_NAMES,
        version=st.sampled_from(["", "11.8.0", "12.1", "2.1.0+cu121", "2.1.0+rocm5.6", "2.1.0+cpu"]),
        build=st.sampled_from(["0", "py3.11_cuda11.8_0", "cpu_0", "rocm_0", "cuda121h0_0"]),
    ),
    max_size=8,
)


@settings(max_examples=500)
@given(_PACKAGES, st.lists(st.sampled_from(["numpy", "zlib", "python"]), max_size=30))
def test_property_the_summary_reads_every_package_that_matters(packages, others) -> None:
    """summarize reads only the packages that can matter: the same answer as reading all of them, whatever
    else the environment holds."""
    from envguard import cuda

    everything = tuple(packages) + tuple(Package("conda", n, "1") for n in others)
    toolkit, toolkit_source = cuda._toolkit(everything)
    build, torch_cuda, torch_source = cuda._torch(everything)
    if toolkit is None and torch_cuda is not None:
        toolkit, toolkit_source = torch_cuda, torch_source
    expected = (toolkit, toolkit_source, build, torch_cuda, torch_source)
    got = summarize(everything)
    assert (got.toolkit, got.toolkit_source, got.torch_build, got.torch_cuda, got.torch_source) == expected


@settings(max_examples=300)
@given(
    st.lists(
        st.builds(
            Package,
            manager=st.sampled_from(["conda", "pip"]),
            name=st.sampled_from(["pytorch", "torch", "pytorch-cpu", "torchvision", "torchaudio", "numpy"]),
            version=st.sampled_from(["2.1.0", "0.16.0", "2.1.0+cu121", "0.16.0+cpu"]),
            build=st.sampled_from(["py3.11_cuda12.1_0", "cpu_py311_0", "py311_cu121"]),
        ),
        max_size=8,
    ),
    st.lists(st.sampled_from(["numpy", "zlib"]), max_size=20),
)
def test_property_the_torch_family_is_found_among_any_packages(packages, others) -> None:
    """torch_family reads only torch's and its family's packages: the same members as a scan of them all."""
    from envguard.cuda import FAMILY, TORCH_NAMES, FamilyMember, _member_build, torch_family

    everything = tuple(Package("conda", n, "1") for n in others) + tuple(packages)

    def first(names: tuple[str, ...]) -> Package | None:
        conda = next((p for p in everything if p.name in names and p.manager == "conda"), None)
        return conda or next((p for p in everything if p.name in names), None)

    torch = first(TORCH_NAMES)
    found = [] if torch is None else [torch, *filter(None, (first((n,)) for n in FAMILY))]
    expected = tuple(FamilyMember(p.name, p.version, p.manager, _member_build(p)) for p in found)
    assert torch_family(everything) == expected
