"""A private conda channel served over HTTP with a token in the path (as anaconda.org's `/t/<TOKEN>/`):
`lock -f`, `create --lock`, `verify`, `sync` and `clean` run against it, the token given once (the
environment.yml's channel URL, then the user's own RATTLER_AUTH_FILE for the lock, which records the URL
without it), and the token appears in no output, no lock and no file envguard or rattler wrote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.channel_server import PRIVATE_TOKEN
from tests.helpers import envguard

pytestmark = pytest.mark.slow


def holding_the_token(folder: Path, allowed: set[Path]) -> list[str]:
    """Every file under `folder` but `allowed` (the user's own) whose bytes hold the token."""
    files = [p for p in folder.rglob("*") if p.is_file() and not p.is_symlink() and p not in allowed]
    return [str(p) for p in files if PRIVATE_TOKEN.encode() in p.read_bytes()]


def test_lock_create_verify_sync_clean_leave_the_token_nowhere(
    token_channel: tuple[str, list[str]],
    tmp_path: Path,
    isolated_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    base, served = token_channel
    project = tmp_path / "project"
    project.mkdir()
    outputs: list[str] = []

    def run(*argv: str) -> int:
        code = envguard(*argv)
        out, err = capsys.readouterr()
        outputs.append(out + err)
        return code

    ymls = {}
    for name, numpy in (("new", "2.0"), ("old", "1.26")):
        ymls[name] = project / f"{name}.yml"
        ymls[name].write_text(
            f"name: {name}\nchannels:\n  - {base}/forge\nplatforms: [linux-64]\n"
            f"dependencies:\n  - python=3.11\n  - numpy={numpy}\n",
            encoding="utf-8",
        )
    lock, drifted_lock = project / "conda-lock.yml", project / "new-lock.yml"
    assert run("lock", "-f", str(ymls["old"]), "--no-cuda", "-o", str(lock)) == 0, outputs[-1]
    assert run("lock", "-f", str(ymls["new"]), "--no-cuda", "-o", str(drifted_lock)) == 0, outputs[-1]
    assert "127.0.0.1" in lock.read_text() and PRIVATE_TOKEN not in lock.read_text()
    # the lock names the channel without its token: the user's own rattler auth file gives it
    auth = tmp_path / "auth.json"
    auth.write_text(json.dumps({"127.0.0.1": {"CondaToken": PRIVATE_TOKEN}}))
    monkeypatch.setenv("RATTLER_AUTH_FILE", str(auth))
    prefix = tmp_path / "envs" / "proj"
    served.clear()
    assert run("create", "--lock", str(drifted_lock), "-p", str(prefix), "--backend", "embedded") == 0, (
        outputs[-1]
    )
    assert any(p.endswith(".conda") or p.endswith(".tar.bz2") for p in served), served
    assert run("verify", "--lock", str(lock)) == 0, outputs[-1]
    assert run("check", str(prefix), "--lock", str(lock)) == 1
    assert run("sync", str(prefix), "--lock", str(lock), "--yes", "--backend", "embedded") == 0, outputs[-1]
    assert run("check", str(prefix), "--lock", str(lock)) == 0, outputs[-1]
    assert run("clean", "--keep-locked", str(lock)) == 0, outputs[-1]
    assert run("clean", "--keep-locked", str(lock), "--yes") == 0, outputs[-1]
    assert not [text for text in outputs if PRIVATE_TOKEN in text]
    # home (rattler's caches, pkgs, envguard's caches), the locks, the environment, the project: only the
    # user's own files hold it
    assert holding_the_token(tmp_path, {auth, *ymls.values()}) == []


def test_a_condarc_channel_alias_with_a_token_is_where_bare_channel_names_live(
    token_channel: tuple[str, list[str]],
    tmp_path: Path,
    isolated_home: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`channel_alias` in .condarc (a mirror of anaconda.org, with its token): `channels: [forge]` solves,
    downloads and verifies through it; the lock records the mirror's URL without the token, and a later
    process (the credential no longer in memory) gets it from the condarc again."""
    from envguard.channels import forget

    base, served = token_channel
    (isolated_home / ".condarc").write_text(f"channel_alias: {base}\n")
    yml = tmp_path / "environment.yml"
    yml.write_text("name: mirrored\nchannels:\n  - forge\ndependencies:\n  - python=3.11\n  - zlib\n")
    lock = tmp_path / "conda-lock.yml"
    served.clear()
    assert envguard("lock", "-f", str(yml), "--no-cuda", "-o", str(lock)) == 0, capsys.readouterr().err
    assert any("repodata" in p for p in served), served
    text = lock.read_text()
    assert f"{base.split('/t/')[0]}/forge/" in text and PRIVATE_TOKEN not in text
    forget()  # as a new process: the token only in the condarc
    assert envguard("verify", "--lock", str(lock)) == 0, capsys.readouterr().err
    out, err = capsys.readouterr()
    assert PRIVATE_TOKEN not in out + err
    assert holding_the_token(tmp_path, {isolated_home / ".condarc"}) == []
