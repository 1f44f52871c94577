"""The `Reproduce it with:` line of a lock's header: a command that runs as printed from any folder.

Inside a git work tree the paths are relative to its root and the line starts from there,
`(cd "$(git rev-parse --show-toplevel)" && envguard lock -f envs/environment.yml -o envs/conda-lock.yml)`:
it works from any folder of any checkout, and a committed lock names no machine path. Outside one the paths
are absolute. Every path is quoted for the shell.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from envguard.errors import BadInputError
from envguard.output import shell_quote
from envguard.prefix.condaconfig import find_named

GIT_ROOT = '"$(git rev-parse --show-toplevel)"'


def work_tree(folder: Path) -> Path | None:
    """The git work tree holding `folder` (a `.git` folder, or the `.git` file of a worktree or submodule),
    None outside one."""
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


class Reproduce:
    """Builds the line for a lock written to `target` (`-` for stdout: relative to the current folder)."""

    def __init__(self, target: str) -> None:
        self.target = target
        folder = (Path(target).parent if target != "-" else Path(".")).resolve()
        self.root = work_tree(folder)

    def path(self, path: Path | str) -> str:
        """`path` as the line names it: relative to the work tree's root, else absolute; quoted."""
        resolved = Path(path).resolve()  # as the root is: a symlinked temp folder gives no `../..` detour
        if self.root is not None:
            try:
                return shell_quote(Path(os.path.relpath(resolved, self.root)).as_posix())
            except ValueError:  # another drive on Windows
                pass
        return shell_quote(str(resolved))

    def output(self) -> str:
        return "-" if self.target == "-" else self.path(self.target)

    def line(self, parts: list[str]) -> str:
        """The command, started from the work tree's root where there is one."""
        command = " ".join(["envguard lock", *parts, "-o", self.output()])
        return f"(cd {GIT_ROOT} && {command})" if self.root is not None else command

    def live_source(self, source: str | None, prefix: Path) -> str:
        """A live environment: `name:ENV` when conda knows it by that name, else its path."""
        if source and source.startswith("name:"):
            return shell_quote(source)
        try:
            if find_named(prefix.name).resolve() == prefix.resolve():
                return shell_quote(f"name:{prefix.name}")
        except BadInputError:
            pass
        return self.path(prefix)


def yml_line(
    path: Path,
    target: str,
    platforms: Sequence[str],
    cuda: str | None,
    no_cuda: bool,
    flags: Sequence[str] = (),
) -> str:
    """The line for a lock solved from the environment.yml at `path` and written to `target`: the one
    `lock -f` and `create -f` both write, so the same solve gives the same header. `platforms`: those the
    line names (none where the file's own `platforms:` decide); `flags`: lock's other options, as given."""
    where = Reproduce(target)
    parts = ["-f", where.path(path), *flags, *(f"--platform {p}" for p in sorted(platforms))]
    if cuda:
        parts.append(f"--cuda {shell_quote(cuda)}")
    elif no_cuda:
        parts.append("--no-cuda")
    return where.line(parts)
