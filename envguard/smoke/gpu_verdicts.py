"""Smoke's GPU verdicts (pure): the round-trip hash, pinned copy speed against the PCIe link, pageable vs
pinned, and how idle the GPU sits while a fake training step consumes batches."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from envguard.findings import Finding, Status
from envguard.machine.gpu import pcie_gbps
from envguard.smoke.verdicts import STARVED_FIX


def gpu(
    result: dict[str, Any] | None, fallback_link: tuple[int | None, int | None] = (None, None)
) -> list[Finding]:
    """Round-trip hash, pinned copy speed against the PCIe link, pageable vs pinned, and GPU idle time."""
    if not result:
        return []
    out: list[Finding] = []
    trip = result.get("roundtrip") or {}
    if trip:
        status: Status = "PASS" if trip.get("equal") else "FAIL"
        out.append(
            Finding(
                "gpu",
                "host -> device -> host",
                status,
                f"batch digest {str(trip.get('host'))[:12]} -> {str(trip.get('after_device'))[:12]}",
                ""
                if trip.get("equal")
                else "copies corrupt data: check the GPU with nvidia-smi -q (ECC errors) and the driver",
            )
        )
    out.extend(_bandwidth(result.get("h2d") or {}, fallback_link))
    out.extend(_idle(result.get("idle") or []))
    return out


def _bandwidth(h2d: dict[str, Any], fallback: tuple[int | None, int | None]) -> list[Finding]:
    pinned, pageable = h2d.get("pinned_gbps"), h2d.get("pageable_gbps")
    if not pinned:
        return []
    link = h2d.get("link") or {}
    gen, width = (link.get("gen"), link.get("width")) if link.get("available") else fallback
    where = "under load" if link.get("available") else "NVML max (not read under load)"
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


def _idle(runs: Sequence[dict[str, Any]]) -> list[Finding]:
    measured = [r for r in runs if r.get("idle_fraction") is not None]
    if not measured:
        return []
    most = max(measured, key=lambda r: r["workers"])
    evidence = "; ".join(f"num_workers={r['workers']}: GPU idle {r['idle_fraction']:.0%}" for r in measured)
    if most["idle_fraction"] <= 0.2:
        return [Finding("gpu", "GPU idle while training", "PASS", evidence)]
    return [
        Finding(
            "gpu",
            "GPU idle while training",
            "WARN",
            evidence + f" (fake step {most['step_ms']:.0f} ms)",
            "the loader cannot keep the GPU busy: " + STARVED_FIX,
        )
    ]
