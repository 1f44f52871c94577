"""`envguard lock`: conda-lock.yml (or explicit) from a live environment (exact) or an environment.yml
(solved)."""

from envguard.lock.reproduce import yml_line

__all__ = ["yml_line"]  # create -f writes the Reproduce line lock -f writes
