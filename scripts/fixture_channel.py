"""Build real conda packages and wheels from fixtures/packages.yaml into local file:// channels.

Used by the tests (imported) and by hand:

    # channels OUT_DIR/{forge,pytorch,alt}, wheels OUT_DIR/wheels
    python scripts/fixture_channel.py OUT_DIR
    python scripts/fixture_channel.py OUT_DIR --bulk 300 # plus 300 extra packages (benchmarks)

Packages are real `.conda` archives (conda_package_handling) with index.json, paths.json and files, indexed by
rattler, so rattler/conda solve and install them like any channel. A `launcher` package (python) ships
`bin/python` scripts that exec the interpreter running this builder: tests get a real interpreter (with real
numpy and torch) inside each installed prefix. The `isolated` recipes (`build_isolated`) are a `venv` python
whose `sys.prefix` is the prefix it is installed in, and a real pip: pip run there installs into that prefix.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import csv
import hashlib
import io
import json
import os
import platform
import re
import shutil
import stat
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
RECIPES = REPO / "fixtures" / "packages.yaml"
TIMESTAMP = 1700000000000


@dataclass
class Recipe:
    name: str
    version: str
    build: str
    build_number: int = 0
    subdir: str = "linux-64"
    noarch: str | None = None
    depends: list[str] = field(default_factory=list)
    channel: str = "forge"
    files: dict[str, str] = field(default_factory=dict)
    dist_info: bool = False
    launcher: bool = False
    venv: bool = (
        False  # bin/python* link to the base interpreter beside a pyvenv.cfg (`python -m venv`'s shape)
    )
    wheel: str | None = None  # "ensurepip": the payload is the pip wheel the interpreter bundles
    timestamp: int | None = TIMESTAMP  # milliseconds since the epoch, or None for a record without one

    @property
    def filename(self) -> str:
        return f"{self.name}-{self.version}-{self.build}.conda"


def load_recipes(path: Path = RECIPES, key: str = "packages") -> tuple[list[Recipe], list[dict[str, str]]]:
    """The recipes under `key` (`packages`, or `isolated`) and the wheels."""
    data = yaml.safe_load(path.read_text())
    recipes = []
    for item in data[key]:
        item = dict(item)
        item["version"] = _version(str(item["version"]))
        item["build"] = str(item["build"])
        if item.get("noarch"):
            item.setdefault("subdir", "noarch")
        recipes.append(Recipe(**item))
    return recipes, [{k: str(v) for k, v in w.items()} for w in data.get("wheels", [])]


Payload = dict[str, tuple[bytes, int] | str]  # relative path -> (content, mode), or a link's target


def _version(text: str) -> str:
    """A recipe's version: `host` is this interpreter's, `bundled` the pip its ensurepip bundles."""
    if text == "host":
        return platform.python_version()
    if text == "bundled":
        import ensurepip

        return ensurepip.version()
    return text


def _payload(recipe: Recipe, python: str) -> Payload:
    """Files (relative path -> (content, mode)) and links (relative path -> target) of a package."""
    if recipe.venv:
        return _venv_payload()
    if recipe.wheel == "ensurepip":
        return _bundled_pip_payload()
    files: Payload = {p: (c.encode(), 0o644) for p, c in recipe.files.items()}
    if recipe.launcher:
        major_minor = ".".join(recipe.version.split(".")[:2])
        script = f'#!/bin/sh\n# envguard test launcher for python {recipe.version}\nexec "{python}" "$@"\n'
        for name in ("python", "python3", f"python{major_minor}"):
            files[f"bin/{name}"] = (script.encode(), 0o755)
        files[f"lib/python{major_minor}/site-packages/README.txt"] = (b"site-packages\n", 0o644)
    if recipe.dist_info:
        dist = f"{recipe.name.replace('-', '_')}-{recipe.version}.dist-info"
        base = (
            "site-packages"
            if recipe.noarch == "python"
            else f"lib/python{_python_of(recipe.build)}/site-packages"
        )
        files[f"{base}/{dist}/METADATA"] = (
            f"Metadata-Version: 2.1\nName: {recipe.name}\nVersion: {recipe.version}\n\n".encode(),
            0o644,
        )
        files[f"{base}/{dist}/INSTALLER"] = (b"conda\n", 0o644)
        module = recipe.name.replace("-", "_")
        files[f"{base}/{module}/__init__.py"] = (f'__version__ = "{recipe.version}"\n'.encode(), 0o644)
    if not files:
        files[f"share/{recipe.name}/{recipe.name}-{recipe.version}.txt"] = (
            f"{recipe.name} {recipe.version} {recipe.build}\n".encode(),
            0o644,
        )
    return files


def base_interpreter() -> Path:
    """The interpreter this process's venv (if any) was made from: what `python -m venv` links to."""
    found = Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    if not found.is_file():
        raise RuntimeError(f"no base interpreter at {found}: the isolated python needs one")
    return found


def _venv_payload() -> Payload:
    """`python -m venv`'s shape, installed by any conda: bin/python* link to the base interpreter (conda
    copies an absolute link, rattler keeps it: both work) and pyvenv.cfg names its home, so `sys.prefix` is
    the prefix the package is installed in and site-packages is the prefix's own."""
    base = base_interpreter()
    major_minor = f"{sys.version_info.major}.{sys.version_info.minor}"
    cfg = (
        f"home = {base.parent}\ninclude-system-site-packages = false\nversion = {platform.python_version()}\n"
    )
    payload: Payload = {name: str(base) for name in ("bin/python", "bin/python3", f"bin/python{major_minor}")}
    payload["pyvenv.cfg"] = (cfg.encode(), 0o644)
    payload[f"lib/python{major_minor}/site-packages/README.txt"] = (b"site-packages\n", 0o644)
    return payload


def _bundled_pip_payload() -> Payload:
    """The pip wheel this interpreter's ensurepip bundles, laid out as a noarch python package
    (`site-packages/`, a dist-info whose INSTALLER is conda, as conda-forge's pip)."""
    import ensurepip

    folder = Path(ensurepip.__file__).parent / "_bundled"
    wheel = next(folder.glob(f"pip-{ensurepip.version()}-*.whl"))
    payload: Payload = {}
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            if info.is_dir():
                continue
            payload[f"site-packages/{info.filename}"] = (archive.read(info), 0o644)
    payload[f"site-packages/pip-{ensurepip.version()}.dist-info/INSTALLER"] = (b"conda\n", 0o644)
    return payload


def _python_of(build: str) -> str:
    """The python a compiled package was built for, from its build string (`py312h...`, `py3.11_...`)."""
    match = re.search(r"py3\.?(\d+)", build)
    return f"3.{match.group(1)}" if match else "3.11"


def build_package(recipe: Recipe, out_channel: Path, python: str = sys.executable) -> Path:
    """Write one .conda package into out_channel/<subdir>/ and return its path."""
    from conda_package_handling import api

    with tempfile.TemporaryDirectory(prefix="envguard-pkg-") as tmp:
        src = Path(tmp) / "src"
        (src / "info").mkdir(parents=True)
        paths = []
        for rel, item in sorted(_payload(recipe, python).items()):
            target = src / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(item, str):  # a link, as conda-build records one
                target.symlink_to(item)
                paths.append({"_path": rel, "path_type": "softlink"})
                continue
            data, mode = item
            target.write_bytes(data)
            target.chmod(mode)
            paths.append(
                {
                    "_path": rel,
                    "path_type": "hardlink",
                    "sha256": hashlib.sha256(data).hexdigest(),
                    "size_in_bytes": len(data),
                }
            )
        index: dict[str, Any] = {
            "name": recipe.name,
            "version": recipe.version,
            "build": recipe.build,
            "build_number": recipe.build_number,
            "depends": recipe.depends,
            "subdir": recipe.subdir,
            "license": "BSD-3-Clause",
        }
        if recipe.timestamp is not None:
            index["timestamp"] = recipe.timestamp
        if recipe.subdir != "noarch":
            index.update(arch="x86_64", platform="linux")
        if recipe.noarch:
            index["noarch"] = recipe.noarch
        (src / "info" / "index.json").write_text(json.dumps(index, indent=2))
        (src / "info" / "paths.json").write_text(json.dumps({"paths_version": 1, "paths": paths}, indent=2))
        (src / "info" / "files").write_text("".join(p["_path"] + "\n" for p in paths))
        if recipe.noarch == "python":
            noarch: dict[str, Any] = {"type": "python"}
            if recipe.wheel == "ensurepip":  # bin/pip*, written by the installer as conda-forge's pip asks
                noarch["entry_points"] = [f"{n} = pip._internal.cli.main:main" for n in ("pip", "pip3")]
            (src / "info" / "link.json").write_text(
                json.dumps({"noarch": noarch, "package_metadata_version": 1})
            )
        out = out_channel / recipe.subdir
        out.mkdir(parents=True, exist_ok=True)
        api.create(str(src), None, recipe.filename, out_folder=str(out))
    return out / recipe.filename


def bulk_recipes(count: int, channel: str = "forge") -> list[Recipe]:
    """`count` extra small packages (bench-pkg-000...) each with a few files, for 300-package benchmarks."""
    recipes = []
    for i in range(count):
        files = {f"share/bench/pkg{i:03d}/file{j}.txt": f"bench {i} {j}\n" * 20 for j in range(8)}
        recipes.append(
            Recipe(
                name=f"bench-pkg-{i:03d}",
                version=f"1.{i % 7}.{i % 3}",
                build=f"h{i:07x}_0",
                files=files,
                channel=channel,
            )
        )
    return recipes


def index(channel_dir: Path) -> None:
    from rattler.index import index_fs

    (channel_dir / "noarch").mkdir(parents=True, exist_ok=True)
    asyncio.run(index_fs(channel_dir))


def build_channels(out: Path, *, bulk: int = 0, python: str = sys.executable) -> dict[str, Path]:
    """Build every channel named in the recipes under `out`; return channel name -> folder."""
    recipes, wheels = load_recipes()
    recipes += bulk_recipes(bulk)
    channels: dict[str, Path] = {}
    for recipe in recipes:
        folder = channels.setdefault(recipe.channel, out / recipe.channel)
        build_package(recipe, folder, python)
    for folder in channels.values():
        index(folder)
    wheel_dir = out / "wheels"
    for wheel in wheels:
        build_wheel(wheel["name"], wheel["version"], wheel_dir)
    return channels


def build_isolated(out: Path) -> Path:
    """The `isolated` recipes (a venv python and a real pip) as one indexed channel `out`: solve them with the
    forge channel (python needs its zlib)."""
    recipes, _wheels = load_recipes(key="isolated")
    for recipe in recipes:
        build_package(recipe, out)
    index(out)
    return out


def build_wheel(name: str, version: str, out: Path) -> Path:
    """A minimal pure-Python wheel (module + dist-info + RECORD) that pip installs offline."""
    out.mkdir(parents=True, exist_ok=True)
    dist = name.replace("-", "_")
    path = out / f"{dist}-{version}-py3-none-any.whl"
    files = {
        f"{dist}/__init__.py": f'__version__ = "{version}"\n',
        f"{dist}-{version}.dist-info/METADATA": (
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\n"
        ),
        f"{dist}-{version}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: "
        "envguard-fixtures\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    with zipfile.ZipFile(path, "w") as archive:
        for rel, content in files.items():
            data = content.encode()
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            archive.writestr(rel, data)
            writer.writerow([rel, f"sha256={digest}", len(data)])
        rec = f"{dist}-{version}.dist-info/RECORD"
        writer.writerow([rec, "", ""])
        archive.writestr(rec, record.getvalue())
    return path


def write_history(
    prefix: Path, specs: list[str], *, cmd: str = "conda create", date: str = "2026-11-29 12:00:00"
) -> None:
    """Append a conda-style history block (as conda 26 writes it) for the installed records."""
    meta = prefix / "conda-meta"
    lines = [f"==> {date} <==", f"# cmd: {cmd}", "# conda version: 26.7.1"]
    for record_path in sorted(meta.glob("*.json")):
        record = json.loads(record_path.read_text())
        channel = record.get("channel", "").rstrip("/")
        subdir = record.get("subdir", "")
        lines.append(f"+{channel}/{subdir}::{record['name']}-{record['version']}-{record['build']}")
    lines.append(f"# update specs: {specs!r}")
    with open(meta / "history", "a", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")


def make_executable(path: Path) -> None:
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument(
        "--bulk", type=int, default=0, help="add this many extra packages to the forge channel"
    )
    parser.add_argument("--clean", action="store_true", help="remove OUT first")
    args = parser.parse_args(argv)
    if args.clean and args.out.exists():
        shutil.rmtree(args.out)
    channels = build_channels(args.out, bulk=args.bulk)
    for name, folder in sorted(channels.items()):
        print(f"{name}: {folder.resolve().as_uri()}")
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)  # py-rattler's runtime threads can crash CPython's finalisation (cli/boundary.py)
