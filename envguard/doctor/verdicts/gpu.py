"""Doctor's verdicts on the GPU and torch/CUDA compatibility (pure). Every finding says what to do."""

from __future__ import annotations

from envguard.findings import Finding
from envguard.machine.gpu import DriverPresence, NvmlReport, pcie_gbps
from envguard.model import Fingerprints
from envguard.output import human_bytes
from envguard.version import install_line


def gpu_findings(nvml: NvmlReport, presence: DriverPresence | None = None) -> list[Finding]:
    if (not nvml.available or not nvml.gpus) and presence is not None and presence.count:
        driver = f", driver {presence.driver}" if presence.driver else ""
        return [
            Finding(
                "gpu",
                "NVIDIA GPU",
                "WARN",
                f"{presence.count} NVIDIA GPU(s) found by the kernel driver{driver}: {presence.where()}; "
                f"NVML could not be used ({nvml.reason or 'no device'})",
                f"install nvidia-ml-py ({install_line('gpu')}) for memory, utilisation and the PCIe link; "
                "until then doctor cannot check them",
            )
        ]
    if not nvml.available or not nvml.gpus:
        reason = nvml.reason or "NVML sees no device"
        return [
            Finding(
                "gpu",
                "NVIDIA GPU",
                "INFO",
                f"no GPU: {reason}",
                "nothing to do for CPU training; if this machine should have a GPU, install the NVIDIA "
                "driver "
                "and check `nvidia-smi` (in a container: docker run --gpus all)",
            )
        ]
    out: list[Finding] = []
    for gpu in nvml.gpus:
        link = f"PCIe Gen{gpu.pcie_gen} x{gpu.pcie_width} (max Gen{gpu.pcie_max_gen} x{gpu.pcie_max_width})"
        memory = f"{human_bytes(gpu.memory_used)} of {human_bytes(gpu.memory_total)} used"
        evidence = (
            f"{gpu.name} ({gpu.capability}), driver {nvml.driver} (CUDA {nvml.cuda_driver}), {memory}, "
            f"utilisation {gpu.utilization}%, {link}"
        )
        check = f"GPU {gpu.index}"
        if gpu.pcie_max_width is not None and gpu.pcie_max_width < 16:
            out.append(
                Finding(
                    "gpu",
                    check,
                    "WARN",
                    evidence + f": the slot gives x{gpu.pcie_max_width} at most "
                    f"({pcie_gbps(gpu.pcie_max_gen, gpu.pcie_max_width)} GB/s)",
                    "move the GPU to an x16 slot, or keep host-to-device copies small (pin_memory, uint8)",
                )
            )
        elif gpu.memory_total and gpu.memory_used and gpu.memory_used > 0.9 * gpu.memory_total:
            out.append(
                Finding(
                    "gpu",
                    check,
                    "WARN",
                    evidence + ": memory nearly full before training",
                    "find the process holding it with `nvidia-smi` and stop it",
                )
            )
        else:
            out.append(
                Finding(
                    "gpu", check, "PASS", evidence + " (links downshift when idle; smoke reads it under load)"
                )
            )
    return out


def _version_tuple(text: str | None) -> tuple[int, ...]:
    parts: list[int] = []
    for piece in (text or "").split("."):
        digits = "".join(c for c in piece if c.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


def _arch_number(entry: str, prefix: str) -> int | None:
    """`sm_90a` -> 90 (the digits after the prefix, any letter suffix dropped); None when it is not that
    kind."""
    if not entry.startswith(prefix):
        return None
    digits = entry[len(prefix) :].rstrip("abcdefghijklmnopqrstuvwxyz")
    return int(digits) if digits.isdigit() else None


def _arch_ok(capability: str, arch_list: tuple[str, ...]) -> str:
    """'native', 'compatible' (same major, lower minor cubin), 'ptx' (JIT from compute_XY) or 'none'."""
    want = _arch_number(capability, "sm_")
    # sm_90a / sm_100f: architecture-specific builds of the same compute capability
    native = [n for n in (_arch_number(a, "sm_") for a in arch_list) if n is not None]
    ptx = [n for n in (_arch_number(a, "compute_") for a in arch_list) if n is not None]
    if want is None:
        return "none"
    if want in native:
        return "native"
    if any(a // 10 == want // 10 and a <= want for a in native):
        return "compatible"
    if any(a <= want for a in ptx):
        return "ptx"
    return "none"


def torch_findings(
    torch: Fingerprints | None, error: str, nvml: NvmlReport, presence: DriverPresence | None = None
) -> list[Finding]:
    """torch/CUDA compatibility: CPU build on a GPU machine, driver too old, no kernels for the device."""
    if torch is None or torch.torch_version is None:
        detail = error or "torch is not installed in this environment"
        return [
            Finding(
                "torch", "torch and CUDA", "INFO", detail, "install pytorch in the environment to train there"
            )
        ]
    gpus, version = nvml.gpus, torch.torch_version
    present = len(gpus) or (presence.count if presence is not None else 0)
    if torch.torch_cuda is None:
        if present:
            return [
                Finding(
                    "torch",
                    "torch build",
                    "FAIL",
                    f"torch {version} is a CPU build on a machine with {present} GPU(s)",
                    f"install a CUDA build (driver supports CUDA {nvml.cuda_driver}): e.g. "
                    "conda install pytorch pytorch-cuda=12.1 -c pytorch -c nvidia",
                )
            ]
        return [
            Finding("torch", "torch build", "PASS", f"torch {version}, CPU build, on a machine without GPU")
        ]
    if not gpus:
        return [
            Finding(
                "torch",
                "torch build",
                "INFO",
                f"torch {version} is built for CUDA {torch.torch_cuda}, but there is no GPU",
                "it runs on the CPU; a CPU build (cpuonly) is much smaller if this machine never gets a GPU",
            )
        ]
    out = [_driver_finding(version, torch.torch_cuda, nvml.cuda_driver)]
    for gpu in gpus:
        if gpu.capability:
            out.append(_arch_finding(gpu.index, gpu.name, gpu.capability, torch.cuda_arch_list, version))
    return out


def _driver_finding(version: str, runtime: str, driver: str | None) -> Finding:
    if driver is None:
        return Finding(
            "torch",
            "driver vs torch CUDA",
            "WARN",
            "the driver's CUDA version is unknown",
            "check `nvidia-smi` shows a CUDA version",
        )
    need, have = _version_tuple(runtime)[:2], _version_tuple(driver)[:2]
    evidence = f"torch {version} needs CUDA {runtime}; the driver supports CUDA {driver}"
    if have >= need:
        return Finding("torch", "driver vs torch CUDA", "PASS", evidence)
    fix = (
        f"upgrade the NVIDIA driver to one for CUDA >= {runtime}, or install a torch build for CUDA <= "
        f"{driver}"
    )
    if have[:1] == need[:1]:
        return Finding(
            "torch",
            "driver vs torch CUDA",
            "WARN",
            evidence + " (minor-version compatibility only: kernels needing PTX JIT fail)",
            fix,
        )
    return Finding(
        "torch", "driver vs torch CUDA", "FAIL", evidence + ": 'driver too old' at the first CUDA call", fix
    )


def _arch_finding(
    index: int, name: str, capability: str, arch_list: tuple[str, ...], version: str
) -> Finding:
    kind = _arch_ok(capability, arch_list)
    kernels = " ".join(arch_list) or "nothing"
    evidence = f"GPU {index} {name} is {capability}; torch {version} has kernels for {kernels}"
    check = f"kernels for GPU {index}"
    if kind in ("native", "compatible"):
        return Finding("torch", check, "PASS", evidence)
    if kind == "ptx":
        return Finding(
            "torch",
            check,
            "WARN",
            evidence + ": only PTX, compiled at first use (slow start)",
            "install a torch build that lists this architecture in torch.cuda.get_arch_list()",
        )
    return Finding(
        "torch",
        check,
        "FAIL",
        evidence + ": 'no kernel image is available for execution on the device'",
        "install a torch build for this GPU (newer GPUs need newer CUDA builds; old GPUs need older ones)",
    )
