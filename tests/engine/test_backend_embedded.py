"""The embedded engine against real local channels: solve, install (conda-compatible records and history),
list, remove, archive hashes, credentials, progress."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from envguard.engine.backends.base import Request
from envguard.engine.backends.embedded import EmbeddedBackend, write_history
from envguard.errors import BackendError, BadInputError
from envguard.machine.platform import default_virtual_packages
from envguard.prefix.reader import read_prefix
from tests.channel_server import leaks, serve
from tests.helpers import fixture_channel


def request(specs: tuple[str, ...], channels: list[Path | str], cuda: str | None = None) -> Request:
    urls = tuple(c if isinstance(c, str) else c.resolve().as_uri() for c in channels)
    return Request(specs, urls, "linux-64", default_virtual_packages("linux-64", cuda))


def test_install_is_conda_compatible(channels: dict[str, Path], tmp_path: Path) -> None:
    engine = EmbeddedBackend(tmp_path / "pkgs", progress=False)
    wanted = request(("python=3.11", "numpy=1.26", "six"), [channels["forge"]])
    plan = engine.solve(wanted)
    assert {p.name for p in plan.packages} == {"python", "numpy", "six", "zlib"}
    prefix = tmp_path / "env"
    installed = engine.install(prefix, wanted, plan)
    assert {p.name for p in installed.packages} == {"python", "numpy", "six", "zlib"}
    record = json.loads(next((prefix / "conda-meta").glob("numpy-*.json")).read_text())
    assert record["requested_specs"] and record["sha256"] and record["url"].startswith("file://")
    history = (prefix / "conda-meta" / "history").read_text()
    assert "# update specs: ['python=3.11', 'numpy=1.26', 'six']" in history
    assert "::numpy-1.26.4-py311h64a7726_0" in history
    env = read_prefix(prefix)
    assert {r.spec for r in env.requested} == {"python=3.11", "numpy=1.26", "six"}
    assert (
        prefix / "lib" / "python3.11" / "site-packages" / "six" / "__init__.py"
    ).is_file()  # noarch: python


def test_list_and_remove(channels: dict[str, Path], tmp_path: Path) -> None:
    engine = EmbeddedBackend(tmp_path / "pkgs", progress=False)
    prefix = tmp_path / "env"
    engine.install(prefix, request(("zlib",), [channels["forge"]]))
    assert [(p.name, p.version) for p in engine.list(prefix)] == [("zlib", "1.3.1")]
    engine.remove(prefix)
    assert not prefix.exists()
    plain = tmp_path / "not-an-env"
    plain.mkdir()
    with pytest.raises(BadInputError, match="not a conda environment"):
        engine.remove(plain)
    assert plain.exists()


def test_tampered_channel_archive_is_refused(channels: dict[str, Path], tmp_path: Path) -> None:
    forge = tmp_path / "forge"
    shutil.copytree(channels["forge"], forge)
    recipes, _ = fixture_channel.load_recipes()
    six = next(r for r in recipes if r.name == "six")
    six.files = {"site-packages/six/__init__.py": "import os; os.system('echo owned')\n"}
    fixture_channel.build_package(six, forge)  # replaced after indexing: repodata still has the old sha256
    engine = EmbeddedBackend(tmp_path / "pkgs", progress=False)
    prefix = tmp_path / "env"
    with pytest.raises(
        BackendError, match=r"sha256 of six 1\.16\.0 pyh6c4a22f_0 does not match .* nothing was installed"
    ):
        engine.install(prefix, request(("python=3.11", "six"), [forge]))
    assert not (prefix / "conda-meta").exists()


def test_progress_reporter_sees_every_operation(
    channels: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from envguard.engine import install

    seen: list[int] = []
    original = install._Progress.on_transaction_operation_complete

    def count(self: install._Progress, operation: int) -> None:
        seen.append(operation)
        original(self, operation)

    monkeypatch.setattr(install._Progress, "on_transaction_operation_complete", count)
    engine = EmbeddedBackend(tmp_path / "pkgs", progress=True)
    engine.install(tmp_path / "env", request(("python=3.11", "six"), [channels["forge"]]))
    assert len(seen) == 3  # python, zlib, six


def test_channel_credentials_never_reach_the_prefix(channels: dict[str, Path], tmp_path: Path) -> None:
    with serve(channels["forge"].parent) as base:
        engine = EmbeddedBackend(tmp_path / "pkgs", progress=False)
        prefix = tmp_path / "env"
        engine.install(prefix, request(("python=3.11", "zlib"), [f"{base}/forge"]))
    assert leaks(folders=(prefix,)) == []
    record = json.loads(next((prefix / "conda-meta").glob("zlib-*.json")).read_text())
    assert record["url"].startswith("http://127.0.0.1:") and "/forge/linux-64/" in record["url"]


def test_history_appends_revisions(tmp_path: Path) -> None:
    (tmp_path / "conda-meta").mkdir()
    write_history(tmp_path, ["a"], [])
    write_history(tmp_path, ["b"], [])
    text = (tmp_path / "conda-meta" / "history").read_text()
    assert text.count("==> ") == 2 and "# update specs: ['b']" in text


def test_install_failure_is_a_backend_error(channels: dict[str, Path], tmp_path: Path) -> None:
    engine = EmbeddedBackend(tmp_path / "pkgs", progress=False)
    wanted = request(("zlib",), [channels["forge"]])
    plan = engine.solve(wanted)
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    with pytest.raises(BackendError, match=r"^embedded engine \(py-rattler\) could not install into"):
        engine.install(blocker / "env", wanted, plan)
