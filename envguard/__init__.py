"""envguard: reproducible conda environments for machine learning."""

from __future__ import annotations

__version__ = "0.1.0"
