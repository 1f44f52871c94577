"""T3 (issue 11): a lock entry whose file matches its hash but is not a conda package is bad input (exit 2,
one line naming the package), not a crash (exit 4)."""

from __future__ import annotations

import hashlib
import shutil

from tests.helpers import envguard


def test_a_hash_matching_non_archive_is_exit_2(channels, tmp_path, capsys) -> None:
    channel = tmp_path / "chan"
    shutil.copytree(channels["forge"], channel)
    yml = tmp_path / "environment.yml"
    yml.write_text(f"channels:\n  - {channel.resolve().as_uri()}\ndependencies:\n  - zlib\n")
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", "-f", str(yml), "--no-cuda", "-o", str(lock)) == 0
    text = lock.read_text()
    start = text.index("- name: zlib\n")
    url = text[text.index("url: ", start) + 5 : text.index("\n", text.index("url: ", start))]
    archive = next(channel.rglob(url.rsplit("/", 1)[1]))  # the very file the lock names
    garbage = b"this is not a conda package\n" * 10
    archive.write_bytes(garbage)
    for algo in ("md5", "sha256"):
        at = text.index(f"{algo}: ", start) + len(f"{algo}: ")
        end = text.index("\n", at)
        text = text[:at] + hashlib.new(algo, garbage).hexdigest() + text[end:]
    lock.write_text(text)
    capsys.readouterr()
    for argv in (
        ["verify", "--lock", str(lock), "--pkgs-dir", str(tmp_path / "pkgs")],
        ["create", "--lock", str(lock), "-n", "bad"],
    ):
        code = envguard(*argv)
        out, err = capsys.readouterr()
        assert code == 2, (out, err)
        assert "zlib" in err and "not a readable conda package" in err and "internal error" not in err
