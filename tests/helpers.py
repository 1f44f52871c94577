"""Test helpers: install real prefixes from the fixture channels with py-rattler, install wheels with pip."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
# make_prefix(specs, *, name='env', cuda=None, history=True, use=('forge', 'pytorch')) -> installed prefix
MakePrefix = Callable[..., Path]
# ../shared beside the repository (test data, the conda kit); ENVGUARD_TEST_SHARED names another place, or
# a missing one to run the suite as a fresh clone does
SHARED = Path(os.environ.get("ENVGUARD_TEST_SHARED") or REPO.parent / "shared")
sys.path.insert(0, str(REPO / "scripts"))

import fixture_channel  # noqa: E402

from envguard.cli.app import run  # noqa: E402
from envguard.smoke.measured import Measured, decode  # noqa: E402


def virtual(cuda: str | None = None) -> list[object]:
    """Virtual packages for a solve: linux/glibc always, `__cuda` when asked."""
    import rattler

    def vp(name: str, version: str) -> object:
        return rattler.GenericVirtualPackage(
            rattler.PackageName(name), rattler.Version(version), rattler.BuildString("0")
        )

    result = [vp("__unix", "0"), vp("__linux", "6.1"), vp("__glibc", "2.36")]
    if cuda:
        result.append(vp("__cuda", cuda))
    return result


def install(
    prefix: Path,
    specs: Sequence[str],
    channels: Sequence[Path],
    *,
    cache: Path,
    cuda: str | None = None,
    history: bool = True,
) -> Path:
    """Solve `specs` against local channels and install a real prefix; write a conda-style history."""
    import rattler

    async def go() -> None:
        records = await rattler.solve(
            [rattler.Channel(c.resolve().as_uri()) for c in channels],
            [rattler.MatchSpec(s) for s in specs],
            platforms=["linux-64", "noarch"],
            virtual_packages=virtual(cuda),
        )
        await rattler.install(records, prefix, cache_dir=cache, show_progress=False)

    asyncio.run(go())
    if history:
        fixture_channel.write_history(prefix, list(specs), cmd=f"conda create -p {prefix} " + " ".join(specs))
    return prefix


def pip_install(prefix: Path, *args: str) -> None:
    """Install with real pip into the prefix's site-packages (offline)."""
    site = next((prefix / "lib").glob("python3*/site-packages"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-index",
            "--no-deps",
            "--no-compile",
            "--disable-pip-version-check",
            "--target",
            str(site),
            *args,
        ],
        check=True,
        capture_output=True,
        text=True,
    )


def envguard(*argv: str, cwd: Path | None = None) -> int:
    """Run the CLI in-process and return its exit code."""
    old = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    argv0 = sys.argv
    sys.argv = ["envguard", *argv]  # as the console script sees it (a history's `# cmd:` line reads it)
    try:
        return run(list(argv))
    finally:
        sys.argv = argv0
        os.chdir(old)


def check_out(prefix: Path, lock: Path, capsys: Any, *extra: str) -> tuple[int, str]:
    """`envguard check PREFIX --lock LOCK [extra]`: (exit code, stdout)."""
    capsys.readouterr()
    code = envguard("check", str(prefix), "--lock", str(lock), *extra)
    return code, capsys.readouterr().out


def stderr_on_a_terminal(args: list[str], cwd: Path) -> tuple[int, str]:
    """The `envguard` console script with stderr on a real pseudo-terminal: (exit code, what it showed)."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NO_COLOR", "TERM")}
    env["TERM"] = "xterm"
    return _on_a_pty(args, cwd=cwd, env=env, stdout=subprocess.PIPE)


def on_a_terminal(args: list[str], typed: str, columns: int = 160) -> tuple[int, str]:
    """The `envguard` console script with stdin, stdout and stderr on one pseudo-terminal, `typed` typed in:
    (exit code, everything it showed)."""
    env = {**os.environ, "TERM": "dumb", "COLUMNS": str(columns)}
    return _on_a_pty(args, env=env, typed=typed)


def _on_a_pty(
    args: list[str],
    *,
    env: dict[str, str],
    cwd: Path | None = None,
    stdout: int | None = None,
    typed: str | None = None,
) -> tuple[int, str]:
    """Run the console script with stderr (and stdout unless given, and stdin when `typed`) on a
    pseudo-terminal, read by a thread while it runs."""
    import pty
    import threading

    script = str(Path(sys.executable).parent / "envguard")
    leader, follower = pty.openpty()
    chunks: list[bytes] = []

    def read() -> None:
        while True:
            try:
                data = os.read(leader, 65536)
            except OSError:
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    if typed is not None:
        os.write(leader, typed.encode())
    done = subprocess.run(
        [script, *args],
        cwd=cwd,
        stdin=follower if typed is not None else None,
        stdout=follower if stdout is None else stdout,
        stderr=follower,
        env=env,
        timeout=300,
        check=False,
    )
    os.close(follower)
    reader.join(timeout=10)
    os.close(leader)
    return done.returncode, b"".join(chunks).decode("utf-8", "replace")


def smoke_json(capsys: Any, *argv: str) -> tuple[int, dict[str, Any]]:
    """`envguard smoke ARGV --json` in-process: (exit code, the parsed report)."""
    import json

    code = envguard("smoke", *argv, "--json")
    captured = capsys.readouterr()
    assert captured.out, captured.err
    return code, json.loads(captured.out)


def by_check(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A smoke/doctor JSON report's findings keyed by their check."""
    return {f["check"]: f for f in data["findings"]}


def _pythons() -> list[Path]:
    """Real interpreters on this machine (pyenv's versions, /usr/bin), found before HOME is isolated."""
    roots = [Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"]
    found = [p for root in roots for p in sorted(root.glob("3.*/bin/python3.*")) if p.name.count(".") == 1]
    found += sorted(Path("/usr/bin").glob("python3.[0-9]*"))
    return [p for p in found if p.name[len("python") :].replace(".", "").isdigit() and os.access(p, os.X_OK)]


PYTHONS = _pythons()


def other_python() -> Path | None:
    """An interpreter of another minor version than the test's (3.10+), or None."""
    mine = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return next((p for p in PYTHONS if p.name != mine and p.name >= "python3.10"), None)


def make_venv(path: Path, python: Path | str = sys.executable, *wheels: str) -> Path:
    """A real `python -m venv --without-pip` with `wheels` installed by real pip (the test interpreter's,
    acting on the venv through `--python`, offline, no dependencies)."""
    subprocess.run([str(python), "-m", "venv", "--without-pip", str(path)], check=True, capture_output=True)
    if wheels:
        pip = [sys.executable, "-m", "pip", "--python", str(path / "bin" / "python")]
        subprocess.run(
            [*pip, "install", "--no-index", "--no-deps", "--disable-pip-version-check", *wheels],
            check=True,
            capture_output=True,
            text=True,
        )
    return path


# --- the signal dispositions a test relies on in the children it starts ------------------------------------

DEFAULTED = (signal.SIGINT, signal.SIGQUIT)  # what a shell sets to SIG_IGN for a job it starts with `&`


def default_signals() -> None:
    """SIGINT and SIGQUIT at their default action, as a terminal's foreground job has them, whatever this
    process inherited (a background job, `nohup` under a script, CI, an IDE start the suite ignoring them)."""
    for signum in DEFAULTED:
        signal.signal(signum, signal.SIG_DFL)


# Popen(..., **INTERRUPTIBLE): a child a test will Ctrl-C (an ignored disposition survives exec; a Python
# child that inherits SIG_IGN for SIGINT never raises KeyboardInterrupt)
INTERRUPTIBLE: dict[str, Any] = {"preexec_fn": default_signals}


@contextlib.contextmanager
def ctrl_c_raises() -> Iterator[None]:
    """Inside the block SIGINT raises KeyboardInterrupt in this process, as Python arranges where SIGINT is
    not ignored at start-up (a test that signals itself must not depend on how the suite was started)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


# --- processes a test started, found by an environment marker (no orphan may outlive a smoke run)

RUN_MARKER = "ENVGUARD_TEST_RUN"


def marked(tag: str) -> list[int]:
    """Live processes whose environment carries RUN_MARKER=tag (zombies have no readable environ)."""
    needle = f"{RUN_MARKER}={tag}".encode()
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def settle(tag: str, seconds: float = 2.0) -> list[int]:
    """The marked processes still alive after up to `seconds` (a killed group takes a moment to go)."""
    import time

    until = time.monotonic() + seconds
    while marked(tag) and time.monotonic() < until:
        time.sleep(0.1)
    return marked(tag)


def settled(scratch: Path, timeout: float = 30.0) -> list[Path]:
    """What is left in a temp folder once verify's background deleter is done with it (envguard.verify.run
    .discard renames the temporary prefix into a trash folder that a detached rm empties and removes)."""
    import time

    trash = scratch / "envguard-verify-trash"
    deadline = time.monotonic() + timeout
    while trash.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return sorted(scratch.iterdir())


_OPENED: list[str] = []
_WATCHING = [False]


def _audit(event: str, args: tuple[object, ...]) -> None:
    if event == "open" and _WATCHING[0] and args and isinstance(args[0], str | Path):
        _OPENED.append(str(args[0]))


sys.addaudithook(_audit)  # the interpreter's own record of every file opened (hooks stay: it is gated)


@contextlib.contextmanager
def files_opened() -> Iterator[list[str]]:
    """Every path this process opens inside the block, as the interpreter's audit hook reports it."""
    _OPENED.clear()
    _WATCHING[0] = True
    try:
        yield _OPENED
    finally:
        _WATCHING[0] = False


def zlib_lock(folder: Path, channel: Path) -> Path:
    """FOLDER/conda-lock.yml for an environment.yml asking for zlib from CHANNEL (locked by envguard)."""
    return spec_lock(folder, channel, "zlib")


def spec_lock(folder: Path, channel: Path, *specs: str, extra: Sequence[str] = ()) -> Path:
    """FOLDER/conda-lock.yml for an environment.yml asking for SPECS from CHANNEL (`envguard lock -f`,
    `--no-cuda`, plus `extra` options)."""
    folder.mkdir(parents=True, exist_ok=True)
    yml = folder / "environment.yml"
    lines = "".join(f"  - {spec}\n" for spec in specs)
    yml.write_text(f"channels:\n  - {channel.resolve().as_uri()}\ndependencies:\n{lines}")
    lock = folder / "conda-lock.yml"
    assert envguard("lock", "-f", str(yml), "--no-cuda", *extra, "-o", str(lock)) == 0
    return lock


def openssl_keys(folder: Path, name: str = "key") -> tuple[Path, Path]:
    """An ed25519 key pair made by the openssl binary: (FOLDER/NAME.pem, FOLDER/NAME.pub), PEM."""
    folder.mkdir(parents=True, exist_ok=True)
    private, public = folder / f"{name}.pem", folder / f"{name}.pub"
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(private)], check=True)
    subprocess.run(["openssl", "pkey", "-in", str(private), "-pubout", "-out", str(public)], check=True)
    return private, public


# --- a project folder pip builds offline (a PEP 517/660 backend inside it, no build requirements) ---------

_BACKEND = '''"""A build backend in the project's own folder (PEP 517 and 660), for tests: no requirements."""
import base64, hashlib, os, zipfile

NAME, VERSION = {name!r}, {version!r}
HERE = os.path.dirname(os.path.abspath(__file__))
DIST = NAME.replace("-", "_")


def _wheel(directory, files):
    info = f"{{DIST}}-{{VERSION}}.dist-info"
    metadata = f"Metadata-Version: 2.1\\nName: {{NAME}}\\nVersion: {{VERSION}}\\n\\n"
    wheel = "Wheel-Version: 1.0\\nGenerator: tests\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n\\n"
    files = {{**files, f"{{info}}/METADATA": metadata.encode(), f"{{info}}/WHEEL": wheel.encode()}}
    lines = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        lines.append(f"{{path}},sha256={{digest}},{{len(data)}}\\n")
    name = f"{{DIST}}-{{VERSION}}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, name), "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
        archive.writestr(f"{{info}}/RECORD", "".join(lines) + f"{{info}}/RECORD,,\\n")
    return name


def build_wheel(directory, config_settings=None, metadata_directory=None):
    with open(os.path.join(HERE, "src", DIST, "__init__.py"), "rb") as handle:
        return _wheel(directory, {{f"{{DIST}}/__init__.py": handle.read()}})


def build_editable(directory, config_settings=None, metadata_directory=None):
    return _wheel(directory, {{f"__editable__.{{DIST}}.pth": (os.path.join(HERE, "src") + "\\n").encode()}})


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []
'''


def make_project(root: Path, name: str = "proja", version: str = "0.1.0") -> Path:
    """A project folder `pip install FOLDER` and `pip install -e FOLDER` build offline: its own build backend
    (backend.py, no build requirements) and one module."""
    module = root / "src" / name.replace("-", "_")
    module.mkdir(parents=True)
    (module / "__init__.py").write_text(f'VERSION = "{version}"\n')
    (root / "backend.py").write_text(_BACKEND.format(name=name, version=version))
    (root / "pyproject.toml").write_text(
        '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n'
    )
    return root


def venv_with_pip(path: Path) -> Path:
    """A real `python -m venv` (pip, and setuptools on 3.11, from its own ensurepip: offline)."""
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, capture_output=True)
    return path


def venv_pip(venv: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """The venv's own pip (offline: no index, nothing but what `args` names)."""
    env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    return subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", *args],
        capture_output=True,
        text=True,
        env=env,
        check=check,
    )


@contextlib.contextmanager
def mounted(options: Sequence[str], point: Path) -> Iterator[Path]:
    """`mount OPTIONS POINT` for the block - a real tmpfs, bind mount or read-only remount - unmounted after;
    the test is skipped where mounting is not allowed (it needs root)."""
    import pytest

    point.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", *options, str(point)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount here ({done.stderr.strip()}): needs root")
    try:
        yield point
    finally:
        subprocess.run(["umount", "-l", str(point)], check=False)


def prefix_tree(prefix: Path) -> dict[str, str]:
    """Every file, link and folder under `prefix` with its content digest and mode (links not followed)."""
    import hashlib

    out: dict[str, str] = {}
    for path in sorted(prefix.rglob("*")):
        rel = str(path.relative_to(prefix))
        if path.is_symlink():
            out[rel] = "link " + os.readlink(path)
        elif path.is_file():
            out[rel] = f"{oct(path.stat().st_mode)} {hashlib.sha256(path.read_bytes()).hexdigest()}"
        else:
            out[rel] = "dir"
    return out


def hostile_channel(forge: Path, out: Path, escape: str) -> Path:
    """A copy of the forge channel at `out/chan` whose newest zlib installs its first file at `escape` (in
    paths.json and info/files), indexed afresh."""
    import json
    import shutil

    from conda_package_handling import api

    channel = out / "chan"
    shutil.copytree(forge, channel)
    archive = sorted(channel.rglob("zlib-*.conda"))[-1]
    src = out / "src"
    api.extract(str(archive), dest_dir=str(src))
    paths = json.loads((src / "info" / "paths.json").read_text())
    paths["paths"][0]["_path"] = escape
    (src / "info" / "paths.json").write_text(json.dumps(paths))
    (src / "info" / "files").write_text(escape + "\n")
    archive.unlink()
    api.create(str(src), None, archive.name, out_folder=str(archive.parent))
    for stale in [*channel.rglob("repodata*"), *channel.rglob("shards")]:  # index afresh, not incrementally
        shutil.rmtree(stale) if stale.is_dir() else stale.unlink()
    fixture_channel.index(channel)
    return channel


@contextlib.contextmanager
def held_elsewhere(target: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding `target`'s lock (envguard.engine.target.hold) for the block; killed after."""
    script = (
        "import sys, time; from pathlib import Path; from envguard.engine.target import hold\n"
        "with hold(Path(sys.argv[1])):\n    print('held', flush=True); time.sleep(60)\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", script, str(target)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield holder
    finally:
        holder.kill()
        holder.wait()


def smoke_wire(data: object, source: object = "test") -> Measured:
    """The in-environment module's output (as built in a test) decoded as a smoke run decodes its line."""
    return decode(json.dumps(data), source)


def edit_record(prefix: Path, package: str, field: str, value: object) -> Path:
    """Set one field of `package`'s conda-meta record in `prefix` (hand-edited or hostile); its path."""
    import json

    (record,) = (prefix / "conda-meta").glob(f"{package}-*.json")
    data = json.loads(record.read_text())
    data[field] = value
    record.write_text(json.dumps(data))
    return record
