"""What `export -o FILE` tells the user after writing: the one "wrote" line, and a warning naming the file
when it replaced one that git tracks (a hand-written environment.yml overwritten by the tour is otherwise
lost without a word)."""

from __future__ import annotations

from pathlib import Path

from envguard.output import shell_quote
from envguard.process import TimedOut, run


def tracked_by_git(path: Path) -> bool:
    """Whether git tracks `path` (False where git is missing, the folder is no repository, or git fails)."""
    try:
        done = run(["git", "ls-files", "--error-unmatch", "--", path.name], cwd=path.parent, timeout=10)
    except (OSError, TimedOut):
        return False
    return done.returncode == 0


def replaced_warning(output: str, *, anywhere: bool = False) -> str:
    """The warning for a replaced tracked file, with the git lines that show and undo it (run as printed;
    `anywhere`: run from any folder, with `git -C` the file's folder)."""
    git, quoted = "git", shell_quote(output)
    if anywhere:
        git, quoted = f"git -C {shell_quote(str(Path(output).parent))}", shell_quote(Path(output).name)
    return (
        f"replaced {output}, which git tracks: `{git} diff -- {quoted}` shows what changed, "
        f"`{git} checkout -- {quoted}` restores it"
    )
