"""Each command is declared once, with click, in its own module; the options that cannot go together are one
table per command, checked by click's parse (one line, exit 2)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import click
import pytest

from envguard.cli import options
from envguard.cli.app import cli
from envguard.cli.commandlist import COMMANDS
from envguard.errors import EXIT_BAD_INPUT
from tests.helpers import REPO

SCRIPT = str(Path(sys.executable).parent / "envguard")


def test_every_command_is_its_modules_click_command() -> None:
    for name, (module_name, _help) in COMMANDS.items():
        module = importlib.import_module(module_name)
        command = getattr(module, name)
        assert isinstance(command, options.Declared) and command.name == name, module_name
        assert cli.get_command(click.Context(cli), name) is command
        assert not hasattr(module, "GRAMMAR"), f"{module_name} declares its options twice"


def test_the_loader_options_are_declared_once() -> None:
    """smoke and doctor share --loader and the --step-* options: the very same declaration."""
    shared = ("--loader", "--step-ms", "--step-cores", "--step-threads")
    found = []
    for name in ("smoke", "doctor"):
        command = cli.get_command(click.Context(cli), name)
        assert command is not None
        found.append({p.opts[0]: p.help for p in command.params if p.opts[0] in shared})
    assert set(found[0]) == set(shared)
    assert [found[0][flag] for flag in shared[2:]] == [found[1][flag] for flag in shared[2:]]
    source = "\n".join(p.read_text() for p in (REPO / "envguard" / "cli").rglob("*.py"))
    assert source.count('"--step-threads",') == 1


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["smoke", "--sweep", "num_workers"], "--sweep NAMES times your own DataLoader"),
        (["smoke", "--decode", "image"], "--decode image decodes the files of --data DIR"),
        (["smoke", "--loader", "x.py:f", "--dataset", "y.py:g"], "--loader checks your own DataLoader"),
        (["smoke", "--timeout", "30"], "--timeout is how long --distributed waits"),
        (["doctor", "--step-cores", "2"], "describe the step beside --loader"),
        (["check", "--key", "k.pub"], "check an attestation; add --attestation FILE"),
        (["check", "--distributed", "--files"], "--distributed compares the ranks' environments"),
        (["check", "--attestation", "a.json", "--rng"], "--attestation checks the attested packages"),
        (["verify", "--keyless"], "--keyless signs an attestation; add --attest FILE"),
        (["verify", "--attest", "a", "--key", "k", "--unsigned"], "--key and --unsigned are alternatives"),
        (["create", "-n", "a", "-p", "b"], "give --name or --prefix, not both"),
        (["diff", "a", "b", "--markdown", "--json"], "--markdown and --json are alternatives; give one"),
        (["clean", "--yes", "--undo"], "--yes and --undo are alternatives; give one"),
    ],
)
def test_a_rule_refuses_in_one_line(args: list[str], says: str, tmp_path: Path) -> None:
    done = subprocess.run([SCRIPT, *args], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert (done.returncode, done.stdout) == (EXIT_BAD_INPUT, ""), done
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("envguard: error: "), done.stderr
    assert says in lines[0] and f"envguard {args[0]} --help" in lines[0], lines[0]


def test_a_rule_names_only_parameters_its_command_has() -> None:
    """A misspelt name in a rule would never be given, and the rule would never fire."""
    for name in COMMANDS:
        command = cli.get_command(click.Context(cli), name)
        assert isinstance(command, options.Declared)
        names = {param.name for param in command.params}
        for rule in command.rules:
            assert {rule.when, *rule.needs, *rule.excludes} <= names, (name, rule)
        flags = {flag for param in command.params for flag in param.opts}
        assert all(set(group) <= flags for group in command.alternatives), name
