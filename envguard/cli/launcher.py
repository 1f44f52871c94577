"""The entry point that console scripts installed before 0.1.0's click-only command line name
(`envguard.cli.launcher:main`); pyproject.toml names `envguard.cli.app:main`. Drop this module once every
development install has been reinstalled."""

from __future__ import annotations

from envguard.cli.app import main

__all__ = ["main"]
