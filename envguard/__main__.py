"""`python -m envguard` runs the command-line interface."""

from __future__ import annotations

from envguard.cli.app import main

if __name__ == "__main__":
    main()
