"""Doctor's GPU and torch/CUDA verdicts over hand-built records: NVML's view, the kernel driver's without
NVML, the driver against torch's CUDA, kernels for the device."""

from __future__ import annotations

import dataclasses

import pytest

from envguard.doctor.verdicts import gpu
from envguard.machine.gpu import DriverPresence, GpuInfo, NvmlReport
from envguard.model import Fingerprints

A100 = GpuInfo(
    index=0,
    name="NVIDIA A100-SXM4-80GB",
    capability="sm_80",
    memory_total=80 * 2**30,
    memory_used=2**30,
    utilization=0,
    pcie_gen=1,
    pcie_width=16,
    pcie_max_gen=4,
    pcie_max_width=16,
)
GPU_HOST = NvmlReport(available=True, driver="535.104.05", cuda_driver="12.2", gpus=(A100,))
NO_GPU = NvmlReport(available=False, reason="no NVIDIA driver (NVML Shared Library Not Found)")
NO_NVML = NvmlReport(available=False, reason="nvidia-ml-py is not installed (pip install nvidia-ml-py)")
TWO_H100 = DriverPresence(
    devices=("nvidia0", "nvidia1"), models=("NVIDIA H100 80GB HBM3",) * 2, driver="550.54.15"
)


def torch(cuda: str | None, arch: tuple[str, ...] = ()) -> Fingerprints:
    return Fingerprints(torch_version="2.3.1", torch_cuda=cuda, cuda_arch_list=arch)


def test_gpu_present() -> None:
    found = gpu.gpu_findings(GPU_HOST)
    assert (
        found[0].status == "PASS"
        and "A100" in found[0].evidence
        and "Gen1 x16 (max Gen4 x16)" in found[0].evidence
    )
    x8 = dataclasses.replace(A100, pcie_width=8, pcie_max_width=8)
    narrow = NvmlReport(available=True, driver="1", cuda_driver="12.2", gpus=(x8,))
    assert gpu.gpu_findings(narrow)[0].status == "WARN"


def test_memory_nearly_full_before_training_warns() -> None:
    full = dataclasses.replace(A100, memory_used=79 * 2**30)
    found = gpu.gpu_findings(NvmlReport(available=True, driver="1", cuda_driver="12.2", gpus=(full,)))
    assert found[0].status == "WARN" and "nearly full" in found[0].evidence and "nvidia-smi" in found[0].fix


def test_gpu_found_by_the_driver_without_nvml_warns() -> None:
    found = gpu.gpu_findings(NO_NVML, TWO_H100)
    assert (
        found[0].status == "WARN"
        and "2 NVIDIA GPU" in found[0].evidence
        and "no GPU" not in found[0].evidence
    )
    assert "nvidia-ml-py" in found[0].fix and "H100" in found[0].evidence and "550.54.15" in found[0].evidence


def test_no_driver_no_gpu() -> None:
    assert gpu.gpu_findings(NO_NVML, DriverPresence())[0].status == "INFO"
    found = gpu.gpu_findings(NO_GPU)
    assert [f.status for f in found] == ["INFO"] and "no GPU" in found[0].evidence and found[0].fix


def test_cpu_build_of_torch_on_a_gpu_machine_fails() -> None:
    found = gpu.torch_findings(torch(None), "", GPU_HOST)
    assert found[0].status == "FAIL" and "CPU build" in found[0].evidence and "pytorch-cuda" in found[0].fix
    assert gpu.torch_findings(torch(None), "", NO_GPU)[0].status == "PASS"
    assert gpu.torch_findings(torch("12.1"), "", NO_GPU)[0].status == "INFO"


def test_cpu_torch_on_a_gpu_machine_without_nvml_fails() -> None:
    one = DriverPresence(devices=("nvidia0",), driver="550.54.15")
    found = gpu.torch_findings(torch(None), "", NO_NVML, one)
    assert found[0].status == "FAIL" and "CPU build" in found[0].evidence
    assert gpu.torch_findings(torch(None), "", NO_NVML, DriverPresence())[0].status == "PASS"


@pytest.mark.parametrize(
    ("runtime", "status"), [("12.1", "PASS"), ("12.2", "PASS"), ("12.4", "WARN"), ("13.0", "FAIL")]
)
def test_driver_against_torch_cuda(runtime: str, status: str) -> None:
    found = {f.check: f for f in gpu.torch_findings(torch(runtime, ("sm_80",)), "", GPU_HOST)}
    assert found["driver vs torch CUDA"].status == status


@pytest.mark.parametrize(
    ("arch", "status"),
    [
        (("sm_80", "sm_90"), "PASS"),
        (("sm_75",), "FAIL"),
        (("sm_70", "compute_70"), "WARN"),
        (("sm_86",), "FAIL"),
    ],
)
def test_kernels_for_the_device(arch: tuple[str, ...], status: str) -> None:
    found = {f.check: f for f in gpu.torch_findings(torch("12.1", arch), "", GPU_HOST)}
    assert found["kernels for GPU 0"].status == status


def test_sm86_runs_sm80_kernels() -> None:
    rtx = dataclasses.replace(A100, name="RTX 3090", capability="sm_86")
    ampere = NvmlReport(available=True, driver="1", cuda_driver="12.2", gpus=(rtx,))
    found = {f.check: f for f in gpu.torch_findings(torch("12.1", ("sm_80",)), "", ampere)}
    assert found["kernels for GPU 0"].status == "PASS"


@pytest.mark.parametrize(
    ("arch", "kind"),
    [
        (("sm_80", "sm_90a"), "native"),
        (("sm_90a",), "native"),
        (("sm_80", "compute_90a"), "ptx"),
        (("sm_80",), "none"),
    ],
)
def test_arch_entries_with_suffixes(arch: tuple[str, ...], kind: str) -> None:
    assert gpu._arch_ok("sm_90", arch) == kind


def test_torch_missing_or_unprobed() -> None:
    assert gpu.torch_findings(None, "python crashed", NO_GPU)[0].evidence == "python crashed"
    assert gpu.torch_findings(Fingerprints(), "", NO_GPU)[0].status == "INFO"
