"""Watch's verdicts on the GPU (pure, over the run's Summary): its utilisation over the steady window, and
pageable host-to-device copies on a GPU run."""

from __future__ import annotations

from envguard.findings import Finding
from envguard.watch.summary import Summary


def gpu_findings(summary: Summary) -> list[Finding]:
    if not summary.gpus_sampled:
        return [Finding("GPU", "GPU", "INFO", summary.gpu_note or "no GPU")]
    utilisation = summary.figures.gpu_util or 0
    out = [Finding("GPU", "GPU utilisation", "INFO", f"mean {utilisation:.0f}% over the steady window")]
    loader = summary.loader
    if loader is not None and summary.gpu_used and not loader.settings.pin_memory:
        out.append(
            Finding(
                "GPU",
                "host -> device copies",
                "WARN",
                "pin_memory=False on a GPU run",
                "DataLoader(pin_memory=True) and .to(device, non_blocking=True)",
            )
        )
    return out
