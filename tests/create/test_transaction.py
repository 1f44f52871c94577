"""`create --force` never loses the old environment (issue 11, D2/W5/W6): a replacement that fails leaves it
byte-identical and registered, nothing half-made stays behind, and concurrent registrations are all kept."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from envguard.prefix.condaconfig import environments_txt, registered_environments
from tests.helpers import envguard


def _tree(prefix: Path) -> dict[str, str]:
    """Every file, link and folder of a prefix with its content digest and mode."""
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


def test_a_failed_force_create_leaves_the_old_env_byte_identical(
    channels: dict[str, Path], tmp_path: Path, isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    forge = channels["forge"].resolve().as_uri()
    yml = tmp_path / "src" / "environment.yml"
    yml.parent.mkdir()
    yml.write_text(f"name: x\nchannels:\n  - {forge}\ndependencies:\n  - python=3.11\n  - zlib\n")
    assert envguard("create", "-f", str(yml), "-n", "work") == 0
    work = isolated_home / ".conda" / "envs" / "work"
    (work / "my-notes.txt").write_text("the user's own file")
    before = _tree(work)
    lock = yml.parent / "conda-lock.yml"
    text = lock.read_text()
    digest = re.search(r"sha256: ([0-9a-f]{64})", text)
    assert digest is not None
    lock.write_text(text.replace(digest.group(1), "f" * 64))  # one archive no longer matches its lock
    capsys.readouterr()
    assert envguard("create", "--lock", str(lock), "-n", "work", "--force") == 3
    assert _tree(work) == before, "the old environment changed"
    assert work in registered_environments()
    leftovers = [p.name for p in work.parent.iterdir() if p.name.startswith(".")]
    assert leftovers == []


def test_a_failed_new_create_leaves_nothing_registered_or_on_disk(
    channels: dict[str, Path], tmp_path: Path, isolated_home: Path
) -> None:
    forge = channels["forge"].resolve().as_uri()
    yml = tmp_path / "environment.yml"
    # the conda part installs, then the pip step fails (no such wheel anywhere): the half env must go
    yml.write_text(
        f"name: x\nchannels:\n  - {forge}\ndependencies:\n  - python=3.11\n  - pip\n"
        "  - pip:\n    - --no-index\n    - no-such-package-anywhere==1.0\n"
    )
    code = envguard("create", "-f", str(yml), "-n", "half")
    assert code in (2, 3)
    half = isolated_home / ".conda" / "envs" / "half"
    assert not half.exists()
    assert half not in registered_environments()
    assert str(half) not in (environments_txt().read_text() if environments_txt().exists() else "")


def test_concurrent_registrations_are_all_kept(tmp_path: Path, isolated_home: Path) -> None:
    prefixes = [tmp_path / f"env{i}" for i in range(8)]
    script = (
        "import sys; from pathlib import Path; from envguard.prefix.condaconfig import register\n"
        "for i in range(15): register(Path(sys.argv[1] + f'-{i}'))\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(p)], env=os.environ.copy()) for p in prefixes
    ]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    lines = set(environments_txt().read_text().split())
    wanted = {f"{p}-{i}" for p in prefixes for i in range(15)}
    assert wanted <= lines, f"{len(wanted - lines)} of {len(wanted)} registrations were lost"


def test_an_env_left_aside_by_a_killed_create_is_restored(
    channels: dict[str, Path], isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["create", "-c", channels["forge"].resolve().as_uri(), "python=3.11", "zlib", "--name", "kept"]
    assert envguard(*args) == 0
    work = isolated_home / ".conda" / "envs" / "kept"
    before = _tree(work)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    aside = work.with_name(f".kept.envguard-old-{int(dead.stdout)}")
    work.rename(aside)  # what SIGKILL mid `create --force` leaves: the old env aside, the new one half-made
    (work / "lib").mkdir(parents=True)
    capsys.readouterr()
    assert envguard(*args) == 2  # the restored env exists: without --force it is not replaced
    assert "already exists" in capsys.readouterr().err
    assert _tree(work) == before and not aside.exists()
