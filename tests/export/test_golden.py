"""Golden files for every format `envguard export` writes, from a real prefix (CUDA torch, pip package).

Machine-specific parts are normalised before comparing: the fixture channels' file:// URLs, envguard's
version, and the archive hashes (each checked against the real archive first). Regenerate with
ENVGUARD_UPDATE_GOLDEN=1.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from envguard import __version__
from tests.helpers import envguard, pip_install

GOLDEN = Path(__file__).parent / "golden"
CASES = [
    ("export_pinned.yml", ["--pinned"]),
    ("export_full.yml", ["--full"]),
    ("export_from_history.yml", ["--from-history"]),
    ("export_explicit.txt", ["--format", "explicit"]),
]


@pytest.fixture
def golden_env(make_prefix: Any, channels: dict[str, Path]) -> Path:
    prefix: Path = make_prefix(["python=3.11", "numpy=1.26", "pytorch=2.1=*cuda11.8*", "pip"], cuda="12.4")
    pip_install(prefix, "--find-links", str(channels["wheels"]), "tinyproj==1.0.0")
    return prefix


def normalise(text: str, channels: dict[str, Path]) -> str:
    for name in ("forge", "pytorch", "alt"):
        text = text.replace(channels[name].resolve().as_uri(), f"file:///CHANNELS/{name}")
    text = text.replace(f"envguard {__version__} ", "envguard VERSION ")
    return re.sub(r"#[0-9a-f]{64}$", "#<sha256>", text, flags=re.MULTILINE)


@pytest.mark.parametrize(("golden", "args"), CASES, ids=[c[0] for c in CASES])
def test_export_matches_golden(
    golden_env: Path, channels: dict[str, Path], tmp_path: Path, golden: str, args: list[str]
) -> None:
    out = tmp_path / golden
    assert envguard("export", str(golden_env), *args, "-o", str(out)) == 0
    text = out.read_text()
    for url, digest in re.findall(r"^(file://\S+)#([0-9a-f]{64})$", text, flags=re.MULTILINE):
        assert hashlib.sha256(Path(unquote(urlsplit(url).path)).read_bytes()).hexdigest() == digest
    assert str(golden_env) not in text, "no machine paths"
    got = normalise(text, channels)
    if os.environ.get("ENVGUARD_UPDATE_GOLDEN"):
        (GOLDEN / golden).write_text(got)
    assert got == (GOLDEN / golden).read_text()
