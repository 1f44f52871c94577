"""Docs are tests: every shell block of README.md and docs/*.md runs as written (tests/docs/conftest.py says
how a block names what it needs), each command line with the exit code the docs promise, and never a
traceback."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.docs.conftest import DOCS, Block, World, blocks, run_lines
from tests.helpers import REPO

pytestmark = pytest.mark.slow
BLOCKS = blocks()


def test_the_harness_finds_the_documented_blocks() -> None:
    names = {b.doc.name for b in BLOCKS}
    assert {"README.md", "index.md", "use-with-conda.md", "sync.md", "verify.md"} <= names
    tour = next(b for b in BLOCKS if b.doc.name == "index.md" and "envguard snapshot --no-probe" in b.text)
    assert tour.fixtures and len(tour.commands()) == 11
    assert all(b.not_here or b.commands() for b in BLOCKS)


def test_the_readme_tours_a_venv_and_a_conda_environment() -> None:
    """The tour works on the environment the reader has: one block runs in a venv, one in a conda prefix."""
    tours = [b for b in BLOCKS if b.doc.name == "README.md" and "envguard check && python train.py" in b.text]
    assert sorted(b.fixtures[0] for b in tours) == ["project", "venv"]
    assert not any(b.not_here or b.lines_not_here for b in tours)


def test_every_placeholder_is_in_the_docs(placeholders: dict[str, str]) -> None:
    text = "".join(doc.read_text() for doc in DOCS)
    assert all(placeholder in text for placeholder in placeholders)


def test_ci_runs_the_readmes_test_command() -> None:
    """The README's test command is skipped below (it runs this suite); .ci/run runs it, word for word."""
    [block] = [b for b in BLOCKS if "scripts/test.sh" in b.text]
    [command] = block.commands()
    assert command in (REPO / ".ci" / "run").read_text().splitlines()


def _marks(block: Block) -> list[pytest.MarkDecorator]:
    return [pytest.mark.xfail(strict=True, reason=block.pending)] if block.pending else []


@pytest.mark.parametrize("block", [pytest.param(b, marks=_marks(b)) for b in BLOCKS], ids=lambda b: b.name)
def test_block_runs_as_written(
    block: Block, make_world: Callable[[tuple[str, ...], str], World], placeholders: dict[str, str]
) -> None:
    if block.not_here:
        pytest.skip(f"{block.name}: {block.not_here}")
    commands = block.commands()
    numbers = [n for n in range(1, len(commands) + 1) if n not in block.lines_not_here]
    groups = [[n] for n in numbers] if block.apart else [numbers]
    for index, group in enumerate(groups):
        world = make_world(block.fixtures, f"world{index}")
        ran = run_lines(world, [commands[n - 1] for n in group], placeholders)
        for n, code in zip(group, ran.exits, strict=True):
            expected = block.exits.get(n, 0)
            line = commands[n - 1]
            assert code == expected, f"{block.name}, line {n}: `{line}` exited {code}\n{ran.output}"
        assert "Traceback" not in ran.output, ran.output
        for check in world.afterwards:
            check()
    for n, reason in block.lines_not_here.items():
        print(f"{block.name}, line {n} not run here: {reason}")
