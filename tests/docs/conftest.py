"""The docs harness: every shell block of README.md and docs/*.md, found and run as written in a temporary
world that has what the block needs.

A block says what it needs in an HTML comment right above its fence (invisible on GitHub):

    <!-- docs-test: project named; line 5 exits 1 -->
    <!-- docs-test: project; apart; line 3 not here: conda-forge is on the network -->
    <!-- docs-test: not here: it runs this very test suite (CI runs it: .ci/run) -->

The first clause names the fixtures (FIXTURES below); `apart` runs each command line in a fresh world (a list
of independent examples); `line N exits K` expects exit K from the block's Nth command line (default 0);
`line N not here: REASON` and `not here: REASON` leave a line or the block out, with the reason shown as the
skip's; `pending: REASON` expects the block to fail until the change REASON names lands (a strict xfail: it
fails once the block passes, so the clause is removed then). A block without a comment runs in an empty
folder with envguard on PATH.

The placeholders the docs ask the user to fill in (PLACEHOLDERS) are filled with this checkout: a copy of the
working tree for `/path/to/envguard`, a git copy and its commit for `OWNER/envguard@COMMIT`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.helpers import REPO, envguard, install

DOCS = (REPO / "README.md", *sorted((REPO / "docs").rglob("*.md")))
SHELL_LANGS = ("bash", "sh", "shell")
FENCE = re.compile(r"^```(\w*)\s*$")
MARKER = re.compile(r"^<!--\s*docs-test:(.*?)-->\s*$")
FIXTURES = {
    "checkout": "a project's files: environment.yml (python, numpy from the fixture channel) and the "
    "conda-lock.yml solved from it",
    "project": "the checkout's files, train.py, and that environment active (CONDA_PREFIX, its bin/ first on "
    "PATH)",
    "named": "two environments conda knows by name: laptop and server (another numpy)",
    "clone": "a fresh copy of this working tree as the current folder (what `git clone` gives)",
    "conda": "the real conda CLI with its shell functions (`conda activate`), an environment myproj made by "
    "conda, and environment.yml in the current folder",
    "pipx": "pipx, installing into HOME (~/.local/bin on PATH)",
    "venv": "a venv made by `python -m venv` (with pip) holding a wheel, active (VIRTUAL_ENV, its bin/ first "
    "on PATH; envguard installed outside it), and train.py",
}
ENV_YML = "channels:\n  - {forge}\ndependencies:\n  - python=3.11\n  - numpy=1.26\n"
TRAIN = 'print("training")\n'


@dataclass(frozen=True)
class Block:
    """One fenced shell block and what its docs-test comment asks."""

    doc: Path
    line: int  # of the opening fence, 1-based
    text: str
    fixtures: tuple[str, ...] = ()
    apart: bool = False
    not_here: str = ""
    exits: dict[int, int] = field(default_factory=dict)  # command line (1-based) -> expected exit code
    lines_not_here: dict[int, str] = field(default_factory=dict)
    pending: str = ""

    @property
    def name(self) -> str:
        return f"{self.doc.relative_to(REPO).as_posix()}:{self.line}"

    def commands(self) -> list[str]:
        """The command lines: continuation lines joined, blank and comment-only lines dropped."""
        result: list[str] = []
        pending = ""
        for raw in self.text.splitlines():
            line = pending + raw
            if line.rstrip().endswith("\\"):
                pending = line.rstrip()[:-1] + " "
                continue
            pending = ""
            if line.strip() and not line.lstrip().startswith("#"):
                result.append(line)
        return result


def parse_marker(text: str, where: str) -> dict[str, object]:
    """The clauses of a `docs-test:` comment."""
    found: dict[str, object] = {
        "fixtures": (),
        "apart": False,
        "not_here": "",
        "exits": {},
        "lines": {},
        "pending": "",
    }
    head, skipped, reason = text.partition("; not here: ") if "; not here: " in text else ("", "", "")
    if not skipped and text.strip().startswith("not here: "):
        head, reason = "", text.strip().removeprefix("not here: ")
    if reason:  # the whole block is left out: the reason runs to the end of the comment
        text, found["not_here"] = head, reason.strip()
    clauses = [c.strip() for c in text.split(";")]
    exits: dict[int, int] = {}
    lines: dict[int, str] = {}
    for index, clause in enumerate(clauses):
        if not clause:
            continue
        if match := re.fullmatch(r"line (\d+) exits (\d+)", clause):
            exits[int(match.group(1))] = int(match.group(2))
        elif match := re.fullmatch(r"line (\d+) not here: (.+)", clause):
            lines[int(match.group(1))] = match.group(2)
        elif clause == "apart":
            found["apart"] = True
        elif clause.startswith("pending: "):
            found["pending"] = clause.removeprefix("pending: ")
        elif index == 0:
            unknown = [f for f in clause.split() if f not in FIXTURES]
            assert not unknown, f"{where}: unknown docs-test fixture(s) {unknown}; known: {sorted(FIXTURES)}"
            found["fixtures"] = tuple(clause.split())
        else:
            raise AssertionError(f"{where}: cannot read docs-test clause {clause!r}")
    found["exits"], found["lines"] = exits, lines
    return found


def blocks(langs: tuple[str, ...] = SHELL_LANGS, docs: tuple[Path, ...] = DOCS) -> list[Block]:
    """Every fenced block of `langs` in `docs`, with its marker."""
    found: list[Block] = []
    for doc in docs:
        lines = doc.read_text().splitlines()
        index = 0
        while index < len(lines):
            match = FENCE.match(lines[index])
            if not match:
                index += 1
                continue
            end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
            if match.group(1) in langs:
                where = f"{doc.name}:{index + 1}"
                above = next((lines[i] for i in range(index - 1, -1, -1) if lines[i].strip()), "")
                marker = MARKER.match(above)
                m = parse_marker(marker.group(1), where) if marker else parse_marker("", where)
                found.append(
                    Block(
                        doc,
                        index + 1,
                        "\n".join(lines[index + 1 : end]),
                        m["fixtures"],  # type: ignore[arg-type]
                        bool(m["apart"]),
                        str(m["not_here"]),
                        m["exits"],  # type: ignore[arg-type]
                        m["lines"],  # type: ignore[arg-type]
                        str(m["pending"]),
                    )
                )
            index = end + 1
    return found


def copy_tree(target: Path) -> Path:
    """This working tree as a clone holds it: tracked and new files, not ignored ones (.venv, caches)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    for name in listed:
        source = REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def git(cwd: Path, *args: str) -> str:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.org",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.org",
    )
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture(scope="session")
def checkout_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`/path/to/envguard`: a copy of this working tree."""
    return copy_tree(tmp_path_factory.mktemp("envguard-checkout") / "envguard")


@pytest.fixture(scope="session")
def git_copy(checkout_copy: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """`https://github.com/OWNER/envguard` at `COMMIT`: this working tree committed into a git repository."""
    target = copy_tree(tmp_path_factory.mktemp("envguard-git") / "envguard")
    git(target, "init", "-q")
    git(target, "add", "-A")
    git(target, "commit", "-q", "-m", "envguard under test")
    return target, git(target, "rev-parse", "HEAD")


@pytest.fixture
def placeholders(checkout_copy: Path, git_copy: tuple[Path, str], tmp_path: Path) -> dict[str, str]:
    """What the docs ask the user to fill in -> this checkout's stand-in."""
    source, commit = git_copy
    data = tmp_path / "data" / "imagenet"
    data.mkdir(parents=True)
    for i in range(3):
        (data / f"{i:03d}.jpg").write_bytes(bytes([i]) * 4096)
    return {
        "https://github.com/OWNER/envguard@COMMIT": f"{source.as_uri()}@{commit}",
        "/path/to/envguard": str(checkout_copy),
        "/data/imagenet": str(data),
    }


@dataclass
class World:
    """Where a block runs: the folder, the environment variables and the shell lines run before it."""

    cwd: Path
    home: Path
    env: dict[str, str]
    preamble: list[str] = field(default_factory=list)
    afterwards: list[Callable[[], None]] = field(default_factory=list)  # a fixture's checks once it ran

    def prepend_path(self, folder: Path) -> None:
        self.env["PATH"] = f"{folder}{os.pathsep}{self.env['PATH']}"


@dataclass(frozen=True)
class Ran:
    """What running some command lines gave: each line's exit code (None: not reached) and the output."""

    exits: list[int | None]
    output: str


def run_lines(world: World, lines: list[str], placeholders: dict[str, str], timeout: float = 900) -> Ran:
    """Run `lines` in one bash, in order, as a user would paste them; record each one's exit code."""
    status = world.cwd.parent / f".docs-status-{os.getpid()}"
    status.unlink(missing_ok=True)
    script = [*world.preamble]
    for number, line in enumerate(lines):
        for placeholder, value in placeholders.items():
            line = line.replace(placeholder, value)
        script += [line, f'echo "{number} $?" >> {status}']
    done = subprocess.run(
        ["bash", "-c", "\n".join(script)],
        cwd=world.cwd,
        env=world.env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    codes: list[int | None] = [None] * len(lines)
    if status.is_file():
        for record in status.read_text().splitlines():
            number, code = record.split()
            codes[int(number)] = int(code)
    return Ran(codes, f"$ exit {done.returncode}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}")


@pytest.fixture
def make_world(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[tuple[str, ...], str], World]:
    """Factory: a fresh world with `fixtures`, in tmp_path/<name>."""

    def factory(fixtures: tuple[str, ...], name: str) -> World:
        cwd, home = tmp_path / name, tmp_path / f"{name}-home"
        cwd.mkdir()
        home.mkdir()
        env = dict(os.environ)  # isolated_home's, with a HOME of this world's own (`apart` lines share none)
        env.update(
            HOME=str(home),
            XDG_CACHE_HOME=str(home / ".cache"),
            XDG_CONFIG_HOME=str(home / ".config"),
            CONDARC=str(home / ".condarc"),
            ENVGUARD_CACHE_DIR=str(home / ".cache" / "envguard"),
            CONDA_PKGS_DIRS=str(home / "pkgs"),
        )
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        env.pop("PYTHONPATH", None)
        world = World(cwd, home, env)
        for fixture in fixtures:
            BUILDERS[fixture](world, request)
        return world

    return factory


def _checkout(world: World, request: pytest.FixtureRequest) -> None:
    channels: dict[str, Path] = request.getfixturevalue("channels")
    (world.cwd / "environment.yml").write_text(ENV_YML.format(forge=channels["forge"].resolve().as_uri()))
    assert envguard("lock", "-f", "environment.yml", "--no-cuda", cwd=world.cwd) == 0


def _project(world: World, request: pytest.FixtureRequest) -> None:
    channels: dict[str, Path] = request.getfixturevalue("channels")
    pkgs: Path = request.getfixturevalue("pkgs_cache")
    _checkout(world, request)
    (world.cwd / "train.py").write_text(TRAIN)
    specs = ["python=3.11", "numpy=1.26"]
    prefix = install(world.cwd.parent / f"{world.cwd.name}-env", specs, [channels["forge"]], cache=pkgs)
    world.env["CONDA_PREFIX"] = str(prefix)
    world.prepend_path(prefix / "bin")


def _named(world: World, request: pytest.FixtureRequest) -> None:
    channels: dict[str, Path] = request.getfixturevalue("channels")
    pkgs: Path = request.getfixturevalue("pkgs_cache")
    envs = world.home / ".conda" / "envs"
    install(envs / "laptop", ["python=3.11", "numpy=1.26"], [channels["forge"]], cache=pkgs)
    install(envs / "server", ["python=3.11", "numpy=2.0"], [channels["forge"]], cache=pkgs)


def _clone(world: World, request: pytest.FixtureRequest) -> None:
    copy_tree(world.cwd)

    def installed_and_clean() -> None:
        pip = world.cwd / ".venv" / "bin" / "pip"
        if pip.exists():  # the set-up command's venv holds conda-envguard, and the clone gained no lock
            shown = subprocess.run([str(pip), "show", "conda-envguard"], capture_output=True, text=True)
            assert "Name: conda-envguard" in shown.stdout, shown.stdout + shown.stderr
        assert not (world.cwd / "conda-lock.yml").exists()

    world.afterwards.append(installed_and_clean)


def _conda(world: World, request: pytest.FixtureRequest) -> None:
    conda = request.getfixturevalue("conda")
    channels: dict[str, Path] = request.getfixturevalue("channels")
    conda.run("create", "--yes", "--name", "myproj", "python=3.11", "numpy=1.26")
    (world.cwd / "environment.yml").write_text(ENV_YML.format(forge=channels["forge"].resolve().as_uri()))
    world.env["CONDARC"] = os.environ["CONDARC"]  # the kit's, with this test's envs dir (set by `conda`)
    world.env["ENVGUARD_CONDA_HOME"] = str(world.home)  # conda's HOME is envguard's
    world.prepend_path(conda.kit.bin)
    world.preamble.append('eval "$(conda shell.bash hook)"')


def _pipx(world: World, request: pytest.FixtureRequest) -> None:
    world.env["PIPX_HOME"] = str(world.home / ".local" / "share" / "pipx")
    world.env["PIPX_BIN_DIR"] = str(world.home / ".local" / "bin")
    world.prepend_path(world.home / ".local" / "bin")


def _venv(world: World, request: pytest.FixtureRequest) -> None:
    channels: dict[str, Path] = request.getfixturevalue("channels")
    venv = world.cwd.parent / f"{world.cwd.name}-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    [wheel] = sorted(channels["wheels"].glob("tinyproj-1.0.0-*.whl"))
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--no-index", "--no-deps", "-q", str(wheel)]
    quiet = dict(world.env, PIP_DISABLE_PIP_VERSION_CHECK="1")
    subprocess.run(pip, check=True, capture_output=True, env=quiet)
    (world.cwd / "train.py").write_text(TRAIN)
    world.env["VIRTUAL_ENV"] = str(venv)
    world.env.pop("CONDA_PREFIX", None)
    world.prepend_path(venv / "bin")


BUILDERS: dict[str, Callable[[World, pytest.FixtureRequest], None]] = {
    "checkout": _checkout,
    "project": _project,
    "named": _named,
    "clone": _clone,
    "conda": _conda,
    "pipx": _pipx,
    "venv": _venv,
}
assert set(BUILDERS) == set(FIXTURES)
