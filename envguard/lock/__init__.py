"""`envguard lock`: conda-lock.yml (or explicit) from a live environment (exact) or an environment.yml
(solved)."""
