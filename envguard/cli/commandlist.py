"""The command list: each command's module and the line `envguard --help` shows, without importing it."""

from __future__ import annotations

DESCRIPTION = (  # lines under 78 columns: `envguard --help` fits an 80-column terminal
    "envguard: keep conda environments for machine learning reproducible, and say\n"
    "precisely when they drift.\n\n"
    "Exit codes: 0 ok, 1 drift or check failed, 2 bad input or usage, 3 operational\n"
    "failure, 4 bug, 130 Ctrl-C."
)

# name -> (module, one-line help shown by `envguard --help` without importing the module)
COMMANDS: dict[str, tuple[str, str]] = {
    "snapshot": ("envguard.cli.commands.snapshot", "Print an environment as envguard JSON."),
    "export": ("envguard.cli.commands.export", "Write a portable environment.yml or an explicit spec."),
    "lock": (
        "envguard.cli.commands.lock",
        "Write conda-lock.yml from a live environment or an environment.yml.",
    ),
    "diff": ("envguard.cli.commands.diff", "Compare two environments or files, two-way."),
    "check": ("envguard.cli.commands.check", "Check the live environment against a lock or environment.yml."),
    "name": ("envguard.cli.commands.name", "Print the semantic name a source would get."),
    "create": ("envguard.cli.commands.create", "Create an environment with a semantic name."),
    "sync": ("envguard.cli.commands.sync", "Repair an environment in place to match its lock."),
    "verify": ("envguard.cli.commands.verify", "Rebuild the lock in a temporary prefix and check it (CI)."),
    "smoke": ("envguard.cli.commands.smoke", "DataLoader determinism and throughput test."),
    "doctor": ("envguard.cli.commands.doctor", "GPU/CPU/memory/shm/disk checklist for training."),
    "clean": ("envguard.cli.commands.clean", "Safely clean package caches (dry run by default)."),
    "watch": (
        "envguard.cli.commands.watch",
        "Watch a training run: what holds it back (input, CPU, I/O, GPU).",
    ),
}
