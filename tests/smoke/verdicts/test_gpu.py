"""verdicts/gpu.py over hand-built GPU records: the round trip, pinned copy speed against the PCIe link
(measured under load, else envguard's own NVML maximum), pageable vs pinned, and how idle the GPU sits."""

from __future__ import annotations

from envguard.findings import Finding
from envguard.smoke.measured import GpuPhase, HostToDevice, IdleRun, PcieLink, Roundtrip
from envguard.smoke.verdicts import gpu


def trip(equal: bool = True) -> Roundtrip:
    after = "ab" * 32 if equal else "cd" * 32
    return Roundtrip(host="ab" * 32, after_device=after, equal=equal, structure="Tensor", tensors=1, bytes=64)


def h2d(pinned: float | None, pageable: float | None, link: PcieLink) -> HostToDevice:
    return HostToDevice(bytes=1 << 28, reps=5, pageable_gbps=pageable, pinned_gbps=pinned, link=link)


def idle(workers: int, fraction: float | None) -> IdleRun:
    return IdleRun(
        workers=workers,
        pin_memory=True,
        warmup_batches=2,
        batches=8,
        step_ms=80.0,
        busy_ms=100.0,
        span_ms=200.0,
        idle_fraction=fraction,
    )


def by_check(phase: GpuPhase, fallback: gpu.Link = (None, None)) -> dict[str, Finding]:
    return {f.check: f for f in gpu.gpu(phase, fallback)}


def test_gpu_verdicts_from_measurements() -> None:
    link = PcieLink(available=True, gen=4, width=16)
    fast = GpuPhase(
        device="cuda",
        name="gpu",
        roundtrip=trip(),
        h2d=h2d(26.0, 12.0, link),
        idle=(idle(0, 0.7), idle(4, 0.05)),
    )
    found = by_check(fast)
    assert found["host -> device -> host"].status == "PASS"
    assert (
        found["pinned host-to-device"].status == "PASS"
        and "83% of PCIe Gen4 x16 31.5 GB/s" in found["pinned host-to-device"].evidence
    )
    assert found["GPU idle while training"].status == "PASS"
    assert found["pageable vs pinned"].status == "INFO" and "2.2x" in found["pageable vs pinned"].evidence
    slow = GpuPhase(
        device="cuda",
        name="gpu",
        roundtrip=trip(equal=False),
        h2d=h2d(6.0, 3.0, PcieLink(available=False, reason="nvidia-ml-py is not installed")),
        idle=(idle(4, 0.6),),
    )
    found = by_check(slow, fallback=(3, 16))
    assert (
        found["pinned host-to-device"].status == "WARN"
        and "NVML max" in found["pinned host-to-device"].evidence
    )
    assert (
        found["GPU idle while training"].status == "WARN"
        and "fake step 80 ms" in found["GPU idle while training"].evidence
    )
    assert found["host -> device -> host"].status == "FAIL" and "ECC" in found["host -> device -> host"].fix


def test_link_faster_than_pcie_is_not_given_a_share() -> None:
    """GH200's NVLink-C2C moves ~400 GB/s; NVML still reports a PCIe link: no '1375% of Gen1'."""
    phase = GpuPhase(
        device="cuda", name="GH200", idle=(), h2d=h2d(380.0, 60.0, PcieLink(available=True, gen=5, width=16))
    )
    found = by_check(phase)
    pinned = found["pinned host-to-device"]
    assert pinned.status == "INFO" and "not PCIe" in pinned.evidence and "%" not in pinned.evidence
    assert found["pageable vs pinned"].status == "INFO"


def test_unknown_link_and_unmeasured_parts_say_so() -> None:
    unknown = by_check(
        GpuPhase(device="cuda", name="gpu", idle=(), h2d=h2d(20.0, None, PcieLink(available=False)))
    )
    assert (
        unknown["pinned host-to-device"].status == "INFO"
        and "link unknown" in unknown["pinned host-to-device"].evidence
    )
    assert "pageable vs pinned" not in unknown
    on_cpu = GpuPhase(
        device="cpu", name="x86_64", h2d=h2d(None, 8.0, PcieLink(available=False)), idle=(idle(0, None),)
    )
    assert gpu.gpu(on_cpu) == [] and gpu.gpu(None) == []
