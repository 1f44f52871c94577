"""Parse `conda-meta/history` into the user's requested specs (pure)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from envguard.specs import spec_name

_HEADER = re.compile(r"^==>\s*(.*?)\s*<==\s*$")
_SPECS = re.compile(r"^#\s*(update|install|create|remove|uninstall|neutered)\s+specs:\s*(.*)$")


@dataclass(frozen=True, slots=True)
class Revision:
    """One `==> date <==` block."""

    date: str
    command: str
    added: tuple[str, ...]
    removed: tuple[str, ...]
    update_specs: tuple[str, ...]
    remove_specs: tuple[str, ...]
    neutered_specs: tuple[str, ...]


def parse(text: str) -> tuple[Revision, ...]:
    """Split history text into revisions; unknown lines are ignored, as conda does."""
    revisions: list[Revision] = []
    block: dict[str, list[str]] | None = None
    date = command = ""

    def close() -> None:
        if block is not None:
            revisions.append(
                Revision(
                    date,
                    command,
                    tuple(block["added"]),
                    tuple(block["removed"]),
                    tuple(block["update"]),
                    tuple(block["remove"]),
                    tuple(block["neutered"]),
                )
            )

    for raw in text.splitlines():
        line = raw.strip()
        header = _HEADER.match(line)
        if header:
            close()
            block = {k: [] for k in ("added", "removed", "update", "remove", "neutered")}
            date, command = header.group(1), ""
            continue
        if block is None or not line:
            continue
        if line.startswith("# cmd:"):
            command = line[len("# cmd:") :].strip()
            continue
        specs = _SPECS.match(line)
        if specs:
            kind = {"install": "update", "create": "update", "uninstall": "remove"}.get(
                specs.group(1), specs.group(1)
            )
            block[kind].extend(_spec_list(specs.group(2)))
        elif line.startswith("+"):
            block["added"].append(line[1:])
        elif line.startswith("-"):
            block["removed"].append(line[1:])
        elif not line.startswith("#"):
            block["added"].append(line)
    close()
    return tuple(revisions)


def _spec_list(text: str) -> list[str]:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return [s.strip().strip("'\"") for s in text.strip("[]").split(",") if s.strip()]
    if isinstance(value, list | tuple):
        return [str(v) for v in value]
    return []


def requested_specs(revisions: tuple[Revision, ...]) -> dict[str, str]:
    """Fold the revisions into name -> latest requested spec, dropping removed names (conda's own rule)."""
    requested: dict[str, str] = {}
    for revision in revisions:
        for spec in revision.update_specs:
            requested[spec_name(spec)] = spec
        for spec in revision.remove_specs:
            requested.pop(spec_name(spec), None)
        for spec in revision.neutered_specs:
            name = spec_name(spec)
            if name in requested:
                requested[name] = spec
    return requested
