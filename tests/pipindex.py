"""A second PyPI-style index for the tests: real pypiserver on 127.0.0.1 serving real wheels built here with
setuptools (`pip wheel`), among them a `+cpu`-style local version as PyTorch's CPU index has."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCAL_VERSION = "2.13.0+cpu"  # the shape of `torch==2.13.0+cpu` from download.pytorch.org/whl/cpu


def build_wheel(root: Path, name: str, version: str, out: Path, body: str = "") -> Path:
    """A tiny real project (`NAME/__init__.py` with VERSION) built by `pip wheel` with setuptools into
    `out`; returns the wheel."""
    project = root / f"{name}-{version}"
    package = project / name.replace("-", "_")
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(f'VERSION = "{version}"\n{body}')
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n\n'
        f'[project]\nname = "{name}"\nversion = "{version}"\n'
    )
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-w",
            str(out),
            str(project),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    stem = f"{name.replace('-', '_')}-{version}-"
    return next(p for p in out.iterdir() if p.name.startswith(stem) and p.suffix == ".whl")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def pypiserver(packages: Path) -> Iterator[str]:
    """`pypi-server run` on 127.0.0.1 serving `packages` (no auth); yields its index URL (`.../simple/`)."""
    exe = Path(sys.executable).with_name("pypi-server")
    port = _free_port()
    command = [str(exe), "run", "-i", "127.0.0.1", "-p", str(port), "-a", ".", "-P", ".", str(packages)]
    log = packages.parent / "pypiserver.log"  # not a pipe: a full pipe would stop the server
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log.open("wb"))
    url = f"http://127.0.0.1:{port}/simple/"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(url, timeout=2):
                    break
            except (urllib.error.URLError, OSError):
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"pypi-server did not start: {log.read_text()[-500:]!r}") from None
                time.sleep(0.1)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)
