"""Test helpers: install real prefixes from the fixture channels with py-rattler, install wheels with pip."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
# make_prefix(specs, *, name='env', cuda=None, history=True, use=('forge', 'pytorch')) -> installed prefix
MakePrefix = Callable[..., Path]
SHARED = REPO.parent / "shared"
sys.path.insert(0, str(REPO / "scripts"))

import fixture_channel  # noqa: E402

from envguard.cli.app import run  # noqa: E402


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
    try:
        return run(list(argv))
    finally:
        os.chdir(old)


def check_out(prefix: Path, lock: Path, capsys: Any, *extra: str) -> tuple[int, str]:
    """`envguard check PREFIX --lock LOCK [extra]`: (exit code, stdout)."""
    capsys.readouterr()
    code = envguard("check", str(prefix), "--lock", str(lock), *extra)
    return code, capsys.readouterr().out


def stderr_on_a_terminal(args: list[str], cwd: Path) -> tuple[int, str]:
    """The `envguard` console script with stderr on a real pseudo-terminal: (exit code, what it showed)."""
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
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NO_COLOR", "TERM")}
    env["TERM"] = "xterm"
    done = subprocess.run(
        [script, *args], cwd=cwd, stdout=subprocess.PIPE, stderr=follower, env=env, timeout=300, check=False
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
