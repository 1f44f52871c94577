"""Every option a message suggests exists on the commands that print it (issue 26: `lock -f` once said "pass
-c CHANNEL", an option lock did not have).

Each string in envguard that tells the user to pass, use, add or give an option is found by reading the
source; WHO_PRINTS says which commands can print the messages of each module, and each of them must have the
option. A new message in a module not listed here fails until someone says who prints it. Options of other
programs (docker's, conda's, pip's) are named in OTHER_TOOLS.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import click
import pytest

from envguard.cli.app import cli
from envguard.cli.commandlist import COMMANDS
from tests.helpers import REPO, envguard

SUGGESTION = re.compile(
    r"\b(?:pass|use|add|give|with|drop|or|run|again with)\s+`?(-[a-zA-Z](?![\w-])|--[a-z][a-z0-9-]*)"
)

LOCK_READERS = ("snapshot", "export", "diff", "check", "verify")
# module (relative to envguard/) -> the commands whose runs can print its messages and help, for the modules
# below the features; a feature's own package (smoke/..., cli/commands/smoke.py) is that command's
WHO_PRINTS: dict[str, tuple[str, ...]] = {
    "engine/backends/__init__.py": ("create", "name"),
    "engine/backends/cli.py": ("create", "name"),
    "engine/solver.py": ("lock", "create", "name"),
    "distributed/verdicts.py": ("check", "smoke"),  # their --distributed runs judge the ranks
    # NoPlatformEntry, from the lock readers; create and smoke read this machine's entry only and re-word it
    # (this_machine())
    "errors.py": LOCK_READERS,
    "prefix/condaconfig.py": ("clean",),
    "prefix/probe/__init__.py": ("snapshot", "lock"),  # through skip_hint, by the commands that have it
}

# where one module's messages go to different commands: (module, option) -> the commands that print it
PER_OPTION: dict[tuple[str, str], tuple[str, ...]] = {
    ("attest/envelope.py", "--identity"): ("check",),  # check --attestation opening a Sigstore bundle
    ("attest/envelope.py", "--issuer"): ("check",),
    ("attest/envelope.py", "--key"): ("check", "verify"),  # the public key to check, the key to sign with
    ("attest/envelope.py", "--unsigned"): ("verify",),  # "made with --unsigned": verify's option
}


def who_prints(module: str) -> tuple[str, ...] | None:
    """The commands that can print `module`'s messages: WHO_PRINTS, else the feature package's command."""
    if module in WHO_PRINTS:
        return WHO_PRINTS[module]
    parts = module.removeprefix("cli/commands/").removesuffix(".py").split("/")
    return (parts[0],) if parts[0] in COMMANDS else None


# options of the programs a message tells the user to run instead
OTHER_TOOLS = {
    "--shm-size",  # docker run
    "--ipc",  # docker run
    "--gpus",  # docker run
    "--clone",  # conda create
    "--json",  # conda create --dry-run --json (the backend's docstring)
    "--require-hashes",  # pip install
}


def suggestions() -> dict[str, set[str]]:
    """module -> the options its strings suggest."""
    found: dict[str, set[str]] = {}
    for path in sorted((REPO / "envguard").rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr):
                text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
            else:
                continue
            for match in SUGGESTION.finditer(text):
                if match.group(1) not in OTHER_TOOLS:
                    found.setdefault(path.relative_to(REPO / "envguard").as_posix(), set()).add(
                        match.group(1)
                    )
    return found


def options(command: str) -> set[str]:
    found = cli.get_command(click.Context(cli), command)
    assert found is not None
    return {o for param in found.params for o in (*param.opts, *param.secondary_opts)} | {"-h", "--help"}


def test_the_scan_finds_the_messages_of_issue_26() -> None:
    found = suggestions()
    assert "-c" in found["engine/solver.py"] and "--platform" in found["errors.py"]


@pytest.mark.slow  # 43 cases of several seconds each: out of scripts/test.sh --quick
@pytest.mark.parametrize("module", sorted(suggestions()))
def test_every_suggested_option_exists_where_it_is_printed(module: str) -> None:
    for option in sorted(suggestions()[module]):
        commands = PER_OPTION.get((module, option)) or who_prints(module)
        assert commands, f"envguard/{module} suggests {option}: say which commands print it (WHO_PRINTS)"
        for command in commands:
            lacks = f"envguard/{module} suggests {option}: `envguard {command}` lacks it"
            assert option in options(command), lacks


def test_create_and_smoke_name_no_platform_option_for_a_lock_of_another_platform(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = tmp_path / "conda-lock.yml"
    lock.write_text(
        "version: 1\nmetadata:\n  content_hash: {win-64: x}\n  channels: []\n  platforms: [win-64]\n"
        "  sources: []\npackage: []\n"
    )
    capsys.readouterr()
    assert envguard("create", "--lock", str(lock), "-p", str(tmp_path / "env"), "--dry-run") == 2
    err = capsys.readouterr().err
    assert "this machine's platform; the lock has win-64; re-lock it with `envguard lock" in err
    assert "pass --platform" not in err and len(err.splitlines()) == 1
    assert envguard("check", "--lock", str(lock), sys.prefix, "--no-cache") == 2
    assert "pass --platform" in capsys.readouterr().err  # check has it
