"""Private channels (a `/t/<token>` path or `user:password@`) are usable: envguard keeps the credential in
memory, gives rattler the bare URL and hands the credential to rattler's authentication, so the token is
written nowhere: not in rattler's repodata cache, the package cache, conda-meta, the lock or any output."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.channel_server import PRIVATE_PASSWORD, PRIVATE_TOKEN, serve_private
from tests.helpers import envguard


def _secret_files(*folders: Path) -> list[str]:
    found = []
    for folder in folders:
        for path in folder.rglob("*"):
            if path.is_file() and not path.is_symlink():
                data = path.read_bytes()
                if PRIVATE_TOKEN.encode() in data or PRIVATE_PASSWORD.encode() in data:
                    found.append(str(path))
    return found


@pytest.mark.parametrize("kind", ["token", "basic"])
def test_lock_and_create_from_a_private_channel_leave_the_credential_nowhere(
    kind: str,
    channels: dict[str, Path],
    tmp_path: Path,
    isolated_home: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    served: list[str] = []
    project = tmp_path / "project"
    project.mkdir()
    with serve_private(channels["forge"].parent, kind, served) as base:
        yml = project / "environment.yml"
        yml.write_text(
            f"name: private\nchannels:\n  - {base}/forge\nplatforms: [linux-64]\n"
            "dependencies:\n  - python=3.11\n  - zlib\n",
            encoding="utf-8",
        )
        lock = project / "conda-lock.yml"
        code = envguard("lock", "-f", str(yml), "--no-cuda", "-o", str(lock))
        lock_out, lock_err = capsys.readouterr()
        assert code == 0, lock_err
        prefix = tmp_path / "envs" / "private"
        code = envguard("create", "-f", str(yml), "-p", str(prefix), "--no-lock", "--json")
        create_out, create_err = capsys.readouterr()
        assert code == 0, create_err
    assert any(p.endswith("repodata.json") or "repodata" in p for p in served), served
    assert any(p.endswith(".conda") for p in served), served  # rattler downloaded through the credential
    assert (prefix / "conda-meta").is_dir() and list((prefix / "conda-meta").glob("zlib-*.json"))
    assert "127.0.0.1" in lock.read_text(encoding="utf-8")
    outputs = lock_out + lock_err + create_out + create_err
    assert PRIVATE_TOKEN not in outputs and PRIVATE_PASSWORD not in outputs
    rattler_cache = isolated_home / ".cache" / "rattler"
    assert rattler_cache.is_dir()  # the folder the old code filled with credentialed URLs
    # home (rattler's caches, pkgs), the lock, the env, the project: only the user's own file holds it
    assert _secret_files(tmp_path) == [str(yml)]


def test_a_credential_stays_in_memory_only() -> None:
    from envguard.channels import Credential, forget, remember, remembered, split_credential
    from envguard.errors import BadInputError

    assert split_credential("https://h.example/t/tk-1/chan") == (
        "https://h.example/chan",
        Credential("h.example", token="tk-1"),
    )
    assert split_credential("https://u:p%40ss@h.example:8443/chan")[1] == Credential(
        "h.example", username="u", password="p@ss"
    )
    assert split_credential("https://h.example/api/t/tk-1/chan")[1] is None  # not at the path root
    assert split_credential("https://[::1/chan") == ("https://[::1/chan", None)
    assert remember("https://u:p@h.example/chan") == "https://h.example/chan"
    assert remembered() == (Credential("h.example", username="u", password="p"),)
    forget()
    assert remembered() == ()
    remember("https://h.example/t/tk-1/a")
    assert remember("https://h.example/t/tk-2/b") == "https://h.example/b"  # reading a file never fails
    with pytest.raises(BadInputError, match=r"two different credentials for the channel host h\.example"):
        remembered()  # using them does: rattler keeps one credential per host
    forget()


def test_a_second_solve_against_a_server_answering_304_works(
    channels: dict[str, Path], tmp_path: Path, isolated_home: Path
) -> None:
    """A plain HTTP server honours If-Modified-Since: rattler's second solve revalidates its cached sharded
    index of a just-built channel and gets 304 Not Modified, which py-rattler 0.28 reports as an error."""
    import functools
    import http.server
    import os
    import shutil
    import threading

    from envguard.engine.solver import solve
    from envguard.model import VirtualPackage

    root = tmp_path / "served"
    shutil.copytree(channels["forge"], root / "forge")
    for path in (root / "forge").rglob("*"):
        os.utime(path)  # fresh files: the cached copies are stale at once, so rattler revalidates

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/forge"
    glibc = [VirtualPackage("__glibc", "2.35", "0")]
    try:
        first = solve(["zlib"], [url], "linux-64", glibc)
        second = solve(["zlib"], [url], "linux-64", glibc)
    finally:
        server.shutdown()
        server.server_close()
    assert [p.name for p in first.packages] == [p.name for p in second.packages] == ["zlib"]


@pytest.mark.parametrize("kind", ["token", "basic"])
def test_a_private_channel_is_locked_again_by_a_new_process(
    kind: str, channels: dict[str, Path], tmp_path: Path
) -> None:
    """The second `lock -f` of an unchanged environment.yml naming a private channel still authenticates: a
    file holding a credential is never served from the parse cache (the credential lives in the process that
    read the file, not in the parse)."""
    import os
    import subprocess
    import sys

    project = tmp_path / "project"
    project.mkdir()
    launcher = "from envguard.cli.launcher import main\nmain()\n"
    with serve_private(channels["forge"].parent, kind, []) as base:
        yml = project / "environment.yml"
        yml.write_text(f"channels:\n  - {base}/forge\ndependencies:\n  - zlib\n", encoding="utf-8")
        for _ in range(2):
            done = subprocess.run(
                [sys.executable, "-c", launcher, "lock", "-f", str(yml), "--no-cuda", "-o", "-"],
                capture_output=True,
                text=True,
                timeout=120,
                env=os.environ,
            )
            assert done.returncode == 0, done.stderr[-2000:]
            assert "zlib" in done.stdout
    assert _secret_files(tmp_path) == [str(yml)]
