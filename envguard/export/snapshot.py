"""`envguard snapshot`'s work: an environment read whole, as the model holds it (written as envguard JSON by
the command; envguard.formats.snapshot reads it back)."""

from __future__ import annotations

from envguard.model import Environment
from envguard.prefix.probe import SKIP_WITH_NO_PROBE, skip_hint
from envguard.sources import load


def snapshot(source: str | None, *, probe: bool, platform: str | None) -> Environment:
    """SOURCE read whole (with its fingerprints when `probe`); its warnings are in `warnings`."""
    with skip_hint(SKIP_WITH_NO_PROBE):
        return load(source, platform=platform, probe=probe)
