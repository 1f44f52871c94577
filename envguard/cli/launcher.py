"""The entry point console scripts installed from an earlier checkout name (`envguard.cli.launcher:main`);
pyproject.toml now names `envguard.cli.app:main`. An alias, nothing more: drop it once every development
install has been reinstalled (`pip install -e .`)."""

from __future__ import annotations

from envguard.cli.app import main

__all__ = ["main"]
