"""Smoke's GPU verdicts (pure): the round-trip hash, pinned copy speed against the PCIe link, pageable vs
pinned, and how idle the GPU sits while a fake training step consumes batches."""

from __future__ import annotations

from collections.abc import Sequence

from envguard.findings import Finding, Status
from envguard.machine.gpu import pcie_gbps
from envguard.smoke.measured import GpuPhase, HostToDevice, IdleRun
from envguard.smoke.verdicts.throughput import STARVED_FIX

Link = tuple[int | None, int | None]  # PCIe (generation, width)


def gpu(phase: GpuPhase | None, fallback_link: Link = (None, None)) -> list[Finding]:
    """Round-trip hash, pinned copy speed against the PCIe link (`fallback_link`, envguard's own NVML
    maximum, when the environment could not read it), pageable vs pinned, and GPU idle time."""
    if phase is None:
        return []
    out: list[Finding] = []
    trip = phase.roundtrip
    if trip is not None:
        status: Status = "PASS" if trip.equal else "FAIL"
        out.append(
            Finding(
                "gpu",
                "host -> device -> host",
                status,
                f"batch digest {trip.host[:12]} -> {trip.after_device[:12]}",
                ""
                if trip.equal
                else "copies corrupt data: check the GPU with nvidia-smi -q (ECC errors) and the driver",
            )
        )
    if phase.h2d is not None:
        out.extend(_bandwidth(phase.h2d, fallback_link))
    out.extend(_idle(phase.idle))
    return out


def _bandwidth(h2d: HostToDevice, fallback: Link) -> list[Finding]:
    pinned, pageable = h2d.pinned_gbps, h2d.pageable_gbps
    if not pinned:
        return []
    link = h2d.link
    gen, width = (link.gen, link.width) if link.available else fallback
    where = "under load" if link.available else "NVML max (not read under load)"
    theory = pcie_gbps(gen, width)
    out: list[Finding] = []
    if theory:
        share = pinned / theory
        evidence = (
            f"pinned {pinned:.1f} GB/s = {share:.0%} of PCIe Gen{gen} x{width} {theory:.1f} GB/s ({where})"
        )
        verdict: Status = "PASS" if share >= 0.8 else "WARN"
        if share > 1.0:  # faster than the link allows: not a PCIe link (NVLink-C2C) or the link was read idle
            out.append(
                Finding(
                    "gpu",
                    "pinned host-to-device",
                    "INFO",
                    f"pinned {pinned:.1f} GB/s exceeds PCIe "
                    f"Gen{gen} x{width} {theory:.1f} GB/s ({where}): the host link is not PCIe "
                    "(NVLink-C2C) or NVML read it while idle, so no share is given",
                    "nothing to do; compare with the platform's host-link bandwidth",
                )
            )
            return out + _pageable(pinned, pageable)
        out.append(
            Finding(
                "gpu",
                "pinned host-to-device",
                verdict,
                evidence,
                ""
                if verdict == "PASS"
                else "check the slot (x16?), that the link is not downshifted (nvidia-smi -q -d PCIE), and "
                "NUMA placement "
                "(run on the CPU socket attached to the GPU: numactl --cpunodebind)",
            )
        )
    else:
        out.append(
            Finding(
                "gpu",
                "pinned host-to-device",
                "INFO",
                f"pinned {pinned:.1f} GB/s (PCIe link unknown)",
                "install nvidia-ml-py in the environment to compare with the link's theoretical rate",
            )
        )
    return out + _pageable(pinned, pageable)


def _pageable(pinned: float, pageable: float | None) -> list[Finding]:
    if not pageable:
        return []
    return [
        Finding(
            "gpu",
            "pageable vs pinned",
            "INFO",
            f"pageable {pageable:.1f} GB/s, pinned {pinned:.1f} GB/s ({pinned / pageable:.1f}x)",
            "use DataLoader(pin_memory=True) and .to(device, non_blocking=True)",
        )
    ]


def _idle(runs: Sequence[IdleRun]) -> list[Finding]:
    measured = [(r, r.idle_fraction) for r in runs if r.idle_fraction is not None]
    if not measured:
        return []
    most, idle = max(measured, key=lambda m: m[0].workers)
    evidence = "; ".join(f"num_workers={r.workers}: GPU idle {fraction:.0%}" for r, fraction in measured)
    if idle <= 0.2:
        return [Finding("gpu", "GPU idle while training", "PASS", evidence)]
    return [
        Finding(
            "gpu",
            "GPU idle while training",
            "WARN",
            evidence + f" (fake step {most.step_ms:.0f} ms)",
            "the loader cannot keep the GPU busy: " + STARVED_FIX,
        )
    ]
