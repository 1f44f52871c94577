"""docs/use-with-conda.md says what works: every `envguard ...` command it shows is a real command with real
options, it installs the distribution we own, and README's "Use with conda" section links it."""

from __future__ import annotations

import re
import shlex

import click

from envguard.cli.app import cli
from tests.helpers import REPO

PAGE = REPO / "docs" / "use-with-conda.md"
# a command inside a code block: after the prompt, `run:`/`entry:` or `&&`, up to a comment or another command
COMMAND = re.compile(r"(?:^|&&|\brun:|\bentry:)\s*(envguard(?: [^#&|\n]*)?)", re.MULTILINE)


def _code(text: str) -> str:
    return "\n".join(re.findall(r"```(?:bash|yaml)\n(.*?)\n```", text, re.DOTALL))


def _commands(text: str) -> list[list[str]]:
    return [shlex.split(m.group(1)) for m in COMMAND.finditer(_code(text))]


def _options(command: click.Command) -> set[str]:
    names = {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}
    return names | {"-h", "--help"}


def test_every_envguard_command_on_the_page_names_real_options() -> None:
    commands = _commands(PAGE.read_text())
    assert len(commands) >= 10  # the page's lock/check/create/verify lines, the hooks and the CI steps
    context = click.Context(cli)
    for argv in commands:
        if argv[1:2] == ["--version"]:
            continue
        sub = cli.get_command(context, argv[1])
        assert sub is not None, f"{argv}: no such envguard command"
        known = _options(sub)
        for word in argv[2:]:
            if word.startswith("-"):
                assert word.split("=", 1)[0] in known, f"{shlex.join(argv)}: {argv[1]} has no option {word}"


def test_the_page_installs_conda_envguard_and_readme_links_it() -> None:
    text = PAGE.read_text()
    lines = re.findall(r"pipx? install .*", _code(text))
    installs = [shlex.split(line.split("#", 1)[0])[2] for line in lines]
    assert installs and all(i == "/path/to/envguard" or "conda-envguard @ git+" in i for i in installs)
    section = (REPO / "README.md").read_text().split("## Use with conda\n", 1)[1].split("\n## ", 1)[0]
    assert "(docs/use-with-conda.md)" in section
