"""Golden streams (pure): the environment's seeded streams (the fingerprint probe run in it) against the
fingerprints recorded in a lock or snapshot (--lock)."""

from __future__ import annotations

from envguard.findings import Finding
from envguard.model import Fingerprints

GOLDEN_STREAMS = (
    ("torch_randperm", "torch.randperm"),
    ("dataloader_order", "DataLoader shuffle order"),
    ("numpy_legacy", "NumPy RandomState"),
    ("numpy_generator", "NumPy Generator"),
)


def golden(here: Fingerprints | None, lock: Fingerprints | None, lock_name: str) -> list[Finding]:
    """The environment's seeded streams against the fingerprints recorded in the lock."""
    if lock is None:
        return [
            Finding(
                "golden streams",
                lock_name,
                "WARN",
                "the lock carries no fingerprints",
                "re-create it with `envguard lock` (or `envguard snapshot`) so the streams are recorded",
            )
        ]
    if here is None:
        return [
            Finding(
                "golden streams",
                lock_name,
                "WARN",
                "the streams could not be computed here (see errors)",
                "rerun envguard smoke; check that torch imports in the environment",
            )
        ]
    out: list[Finding] = []
    for key, label in GOLDEN_STREAMS:
        recorded, measured = getattr(lock, key), getattr(here, key)
        if not recorded or not measured:
            continue
        if recorded == measured:
            out.append(Finding("golden streams", label, "PASS", f"matches {lock_name} ({measured[:12]})"))
            continue
        torch_now, numpy_now = here.torch_version, here.numpy_version
        versions = f"torch {lock.torch_version} -> {torch_now}, numpy {lock.numpy_version} -> {numpy_now}"
        out.append(
            Finding(
                "golden streams",
                label,
                "FAIL",
                f"{measured[:12]} here, {recorded[:12]} in {lock_name} ({versions})",
                "shuffles and augmentations will not reproduce: install the locked versions "
                f"(`envguard check {lock_name}` lists them) or re-lock if the change is intended",
            )
        )
    return out or [
        Finding(
            "golden streams",
            lock_name,
            "INFO",
            "no stream recorded on both sides",
            "record fingerprints with `envguard lock` in an environment with torch and numpy",
        )
    ]
