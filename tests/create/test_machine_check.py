"""Machine check: CUDA/glibc requirements against detected virtual packages, CONDA_OVERRIDE_* honoured for
real."""

from __future__ import annotations

import pytest

from envguard.create.machine_check import check_plan, check_request, requirements
from envguard.errors import BadInputError
from envguard.machine import virtual
from envguard.model import Package, VirtualPackage

NO_GPU = (VirtualPackage("__glibc", "2.36"), VirtualPackage("__linux", "6.1"), VirtualPackage("__unix", "0"))
GPU = (*NO_GPU, VirtualPackage("__cuda", "12.4"))


@pytest.mark.parametrize(
    "spec", ["pytorch=2.1=*cuda11.8*", "pytorch-cuda=11.8", "tensorflow-gpu", "__cuda>=11"]
)
def test_cuda_build_without_driver_is_refused(spec: str) -> None:
    with pytest.raises(BadInputError, match="no NVIDIA driver") as info:
        check_request(["python=3.11", spec], NO_GPU, "environment.yml")
    assert "CONDA_OVERRIDE_CUDA" in str(info.value)
    assert "\n" not in str(info.value)


def test_cuda_build_with_driver_passes() -> None:
    assert check_request(["python=3.11", "pytorch=2.1=*cuda11.8*"], GPU, "environment.yml") == []


def test_newer_cuda_major_than_driver_is_refused() -> None:
    old_driver = (*NO_GPU, VirtualPackage("__cuda", "11.8"))
    with pytest.raises(BadInputError, match=r"CUDA 12\.1 .* supports CUDA 11\.8"):
        check_request(["pytorch-cuda=12.1"], old_driver, "environment.yml")


def test_toolkit_without_driver_is_only_a_warning() -> None:
    warnings = check_request(["cudatoolkit=11.8"], NO_GPU, "environment.yml")
    assert len(warnings) == 1 and "no NVIDIA driver" in warnings[0]


def test_glibc_requirement_of_a_package_is_checked() -> None:
    zlib = Package("conda", "zlib", "1.3.1", "h4ab18f5_1", depends=("__glibc >=2.17",))
    old = (VirtualPackage("__glibc", "2.12"),)
    with pytest.raises(BadInputError, match=r"zlib 1\.3\.1 .* needs __glibc >=2\.17 .* __glibc 2\.12"):
        check_plan([zlib], old)
    assert check_plan([zlib], NO_GPU) == []


def test_cuda_dependency_without_driver() -> None:
    torch = Package("conda", "pytorch", "2.1.0", "py3.11_cuda11.8_cudnn8.7.0_0", depends=("__cuda",))
    assert [r.virtual for r in requirements([torch])] == ["__cuda"]
    with pytest.raises(BadInputError, match="needs a CUDA driver"):
        check_plan([torch], NO_GPU)


def test_cpu_build_on_gpu_machine_warns_unless_asked() -> None:
    torch = Package("conda", "pytorch", "2.1.0", "py3.11_cpu_0")
    warnings = check_plan([torch], GPU, ["pytorch=2.1", "pytorch-cuda=11.8"])
    assert len(warnings) == 1 and "conda#14761" in warnings[0] and "CPU build" in warnings[0]
    assert "`pytorch-cuda=11.8`" in warnings[0]  # what was asked for (issue 43: it said 12.1)
    assert "`pytorch-cuda=12.4`" in check_plan([torch], GPU, ["pytorch=2.1"])[0]  # else the driver's
    assert check_plan([torch], GPU, ["pytorch=2.1", "cpuonly"]) == []
    assert check_plan([torch], NO_GPU, ["pytorch=2.1"]) == []


def test_override_cuda_is_honoured_and_keyed_in_the_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONDA_OVERRIDE_CUDA", "12.4")
    with_gpu = {v.name: v.version for v in virtual.detect()}
    assert with_gpu["__cuda"] == "12.4"
    monkeypatch.setenv("CONDA_OVERRIDE_CUDA", "")  # conda: empty means "no CUDA"
    assert "__cuda" not in {v.name for v in virtual.detect()}
    monkeypatch.setenv("CONDA_OVERRIDE_CUDA", "11.8")
    assert {v.name: v.version for v in virtual.detect()}["__cuda"] == "11.8"
    monkeypatch.setenv("CONDA_OVERRIDE_CUDA", "12.4")
    assert {v.name: v.version for v in virtual.detect()}[
        "__cuda"
    ] == "12.4"  # from the cache, keyed correctly


def test_override_glibc_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONDA_OVERRIDE_GLIBC", "2.12")
    found = {v.name: v.version for v in virtual.detect()}
    assert found["__glibc"] == "2.12"
    zlib = Package("conda", "zlib", "1.3.1", depends=("__glibc >=2.17",))
    with pytest.raises(BadInputError, match="CONDA_OVERRIDE_GLIBC"):
        check_plan([zlib], virtual.detect())
