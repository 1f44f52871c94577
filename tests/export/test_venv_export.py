"""A plain `python -m venv` with real pip installs: from an index (find-links), a wheel file, an editable
local project and a git commit. Snapshot records each origin; export writes lines pip itself resolves again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from envguard.export.run import to_environment_yml
from envguard.formats import envyml
from envguard.prefix.reader import read_prefix
from tests.helpers import envguard

# A PEP 517/660 build backend small enough to live in the project: no setuptools, no network.
BACKEND = """
import base64, csv, hashlib, io, pathlib, zipfile

NAME, VERSION = "{name}", "0.5.0"
ROOT = pathlib.Path(__file__).parent


def _wheel(directory, files):
    dist = f"{{NAME}}-{{VERSION}}.dist-info"
    files = dict(files)
    files[f"{{dist}}/METADATA"] = f"Metadata-Version: 2.1\\nName: {{NAME}}\\nVersion: {{VERSION}}\\n".encode()
    files[f"{{dist}}/WHEEL"] = (
        b"Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
    )
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\\n")
    name = f"{{NAME}}-{{VERSION}}-py3-none-any.whl"
    with zipfile.ZipFile(pathlib.Path(directory) / name, "w") as archive:
        for rel, data in files.items():
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            archive.writestr(rel, data)
            writer.writerow([rel, f"sha256={{digest}}", len(data)])
        writer.writerow([f"{{dist}}/RECORD", "", ""])
        archive.writestr(f"{{dist}}/RECORD", record.getvalue())
    return name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, {{f"{{NAME}}/__init__.py": (ROOT / NAME / "__init__.py").read_bytes()}})


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, {{f"_{{NAME}}_editable.pth": (str(ROOT) + "\\n").encode()}})


def get_requires_for_build_wheel(config_settings=None):
    return []


get_requires_for_build_editable = get_requires_for_build_wheel
"""


def _project(folder: Path, name: str) -> Path:
    (folder / name).mkdir(parents=True)
    (folder / name / "__init__.py").write_text('VERSION = "0.5.0"\n')
    (folder / "envguard_test_backend.py").write_text(BACKEND.format(name=name))
    (folder / "pyproject.toml").write_text(
        f'[build-system]\nrequires = []\nbuild-backend = "envguard_test_backend"\nbackend-path = ["."]\n\n'
        f'[project]\nname = "{name}"\nversion = "0.5.0"\n'
    )
    return folder


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@e",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@e",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    return subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    ).stdout


def _pip(venv: Path, *args: str) -> str:
    """Real pip (the test interpreter's, a current one) acting on the venv's interpreter via `--python`."""
    command = [
        sys.executable,
        "-m",
        "pip",
        "--python",
        str(venv / "bin" / "python"),
        "--disable-pip-version-check",
        "--no-input",
        *args,
    ]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory, channels: dict[str, Path]) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("venv-export")
    venv = root / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True
    )
    wheels = channels["wheels"]
    _pip(venv, "install", "--no-index", "--find-links", str(wheels), "tinyproj==1.0.0")
    _pip(venv, "install", "--no-index", str(wheels / "other_pkg-0.3.0-py3-none-any.whl"))
    editable = _project(root / "editproj", "editproj")
    _pip(venv, "install", "--no-index", "-e", str(editable))
    repo = _project(root / "gitproj", "gitproj")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "init")
    commit = _git(repo, "rev-parse", "HEAD").strip()
    _pip(venv, "install", "--no-index", f"gitproj @ git+{repo.as_uri()}@{commit}")
    return {"venv": venv, "wheels": wheels, "editable": editable, "repo": repo, "commit": commit}


def test_snapshot_records_pip_origins(venv: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    assert envguard("snapshot", str(venv["venv"]), "--no-probe") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["kind"] == "venv" and data["python"] == ".".join(map(str, sys.version_info[:3]))
    pip = {p["name"]: p for p in data["packages"]}
    assert set(pip) == {"tinyproj", "other-pkg", "editproj", "gitproj"}
    assert all(p["manager"] == "pip" and p["installer"] == "pip" for p in pip.values())
    assert pip["tinyproj"]["origin"] is None
    assert pip["other-pkg"]["origin"]["url"].endswith("/other_pkg-0.3.0-py3-none-any.whl")
    assert pip["editproj"]["origin"] == {
        "url": venv["editable"].as_uri(),
        "editable": True,
        "vcs": "",
        "commit_id": "",
        "requested_revision": "",
    }
    git = pip["gitproj"]["origin"]
    assert (git["vcs"], git["commit_id"], git["url"]) == ("git", venv["commit"], venv["repo"].as_uri())


def test_export_leaves_local_paths_out_unless_asked(
    venv: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert envguard("export", str(venv["venv"])) == 0
    captured = capsys.readouterr()
    parsed = envyml.parse(captured.out, "venv.yml")
    python = ".".join(map(str, sys.version_info[:3]))
    assert [r.spec for r in parsed.requested if r.manager == "conda"] == [
        f"python={python}"
    ]  # conda env create adds pip
    pip = [r.spec for r in parsed.requested if r.manager == "pip"]
    assert "tinyproj==1.0.0" in pip and not any(n in " ".join(pip) for n in ("editproj", "gitproj", "other"))
    assert str(venv["venv"].parent) not in captured.out, "no machine paths"
    assert captured.err.count("--include-local") == 3


def test_include_local_lines_resolve_with_pip(venv: dict[str, Any], tmp_path: Path) -> None:
    """pip itself re-resolves every exported line (a dry run with the same offline sources)."""
    env = read_prefix(venv["venv"])
    exported = to_environment_yml(env, "pinned", include_local=True)
    assert exported.warnings == ()
    lines = [r.spec for r in envyml.parse(exported.text, "venv.yml").requested if r.manager == "pip"]
    assert f"-e {venv['editable']}" in lines
    assert f"gitproj @ git+{venv['repo'].as_uri()}@{venv['commit']}" in lines
    assert any(line.startswith("other-pkg @ file://") for line in lines)
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("\n".join(lines) + "\n")
    report = tmp_path / "report.json"
    _pip(
        venv["venv"],
        "install",
        "--dry-run",
        "--ignore-installed",
        "--no-index",
        "--find-links",
        str(venv["wheels"]),
        "--report",
        str(report),
        "-r",
        str(requirements),
    )
    resolved = {
        i["metadata"]["name"].lower(): i["metadata"]["version"]
        for i in json.loads(report.read_text())["install"]
    }
    assert resolved == {p.name: p.version for p in env.pip_packages()}
