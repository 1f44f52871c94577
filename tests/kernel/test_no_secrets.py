"""No credential from any input leaves envguard (issue 11, S2/S3/S5): every output, written file, cache and
crash log is grepped for the secrets planted in an environment.yml, a prefix's records, history and pip
metadata, and in argv."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from envguard.cli import app as cli
from tests.helpers import envguard

SECRETS = [f"S3CR3T{i}x" for i in range(10)]
ENV_YML = f"""name: demo
channels:
  - https://bob:{SECRETS[0]}@conda.example.invalid/chan
  - https://conda.anaconda.org/t/{SECRETS[1]}/private
dependencies:
  - http://bob:{SECRETS[2]}@host.invalid/chan::zlib
  - pip:
    - --extra-index-url=https://u:{SECRETS[3]}@idx.invalid/simple
    - "--extra-index-url\\thttps://u:{SECRETS[4]}@idx.invalid/simple"
    - pkg @ https://u:{SECRETS[5]}@host.invalid/pkg-1.0-py3-none-any.whl
    - -e git+https://u:{SECRETS[6]}@github.com/o/r.git#egg=r
"""


def _prefix(tmp_path: Path) -> Path:
    prefix = tmp_path / "env"
    meta = prefix / "conda-meta"
    meta.mkdir(parents=True)
    url = f"http://bob:{SECRETS[7]}@host.invalid/chan/linux-64/zlib-1.3.1-h0_0.conda"
    record = {
        "name": "zlib",
        "version": "1.3.1",
        "build": "h0_0",
        "subdir": "linux-64",
        "url": url,
        "channel": url.rsplit("/", 2)[0],
        "requested_specs": [f"http://bob:{SECRETS[7]}@host.invalid/chan::zlib"],
        "depends": [],
    }
    (meta / "zlib-1.3.1-h0_0.json").write_text(json.dumps(record))
    (meta / "history").write_text(
        "==> 2024-01-01 00:00:00 <==\n"
        f"# cmd: conda install --channel https://u:{SECRETS[8]}@host.invalid/chan zlib\n"
        f"+http://bob:{SECRETS[7]}@host.invalid/chan/linux-64::zlib-1.3.1-h0_0\n"
        f"# update specs: ['http://bob:{SECRETS[8]}@host.invalid/chan::zlib']\n"
    )
    dist = prefix / "lib" / "python3.11" / "site-packages" / "r-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: r\nVersion: 1.0\n\n")
    (dist / "INSTALLER").write_text("pip\n")
    direct = {
        "url": f"https://u:{SECRETS[9]}@github.com/o/r.git",
        "vcs_info": {"vcs": "git", "commit_id": "a" * 40},
    }
    (dist / "direct_url.json").write_text(json.dumps(direct))
    return prefix


def _leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def test_no_secret_in_any_output_file_cache_or_log(tmp_path, capsys, monkeypatch) -> None:
    yml = tmp_path / "environment.yml"
    yml.write_text(ENV_YML)
    prefix = _prefix(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    runs = [
        ["snapshot", str(prefix), "--no-probe"],
        ["snapshot", str(prefix), "--no-probe", "-o", str(out / "snap.json")],
        ["snapshot", str(yml), "--no-probe"],
        ["export", str(prefix)],
        ["export", str(prefix), "--full", "-o", str(out / "full.yml")],
        ["export", str(yml), "-o", str(out / "env.yml")],
        ["diff", str(yml), str(prefix)],
        ["diff", str(yml), str(prefix), "--json"],
        ["diff", str(prefix), str(yml), "--markdown"],
        ["check", str(prefix), "-f", str(yml)],
        ["check", str(prefix), "-f", str(yml), "--json"],
        ["lock", "-f", str(yml), "--platform", "linux-64", "-o", str(out / "conda-lock.yml")],
    ]
    printed = []
    for argv in runs:
        code = envguard(*argv)
        captured = capsys.readouterr()
        assert code in (0, 1, 2, 3), (argv, captured.err)
        printed.append((argv, captured.out + captured.err))
    monkeypatch.setitem(cli.COMMANDS, "crash", ("tests.crashing_command", "crash"))
    monkeypatch.setattr(sys, "argv", ["envguard", "crash", f"https://u:{SECRETS[0]}@host.invalid/x"])
    assert envguard("crash") == 4
    err = capsys.readouterr().err
    log = Path(re.search(r"Traceback saved to (\S+);", err).group(1))  # type: ignore[union-attr]
    leaks = {" ".join(argv): _leaks(text) for argv, text in printed if _leaks(text)}
    files = [p for p in tmp_path.rglob("*") if p.is_file() and p != yml and not p.is_relative_to(prefix)]
    leaks.update(
        {
            str(p): _leaks(p.read_text(errors="replace"))
            for p in [*files, log]
            if _leaks(p.read_text(errors="replace"))
        }
    )
    assert not leaks, leaks
    assert "envguard crash" not in log.read_text() or "host.invalid/x" in log.read_text()


@pytest.mark.parametrize(
    ("text", "clean"),
    [
        ("--extra-index-url\thttps://u:PW@idx/simple", "--extra-index-url\thttps://idx/simple"),
        ("pkg @ https://u:PW@h/p.whl", "pkg @ https://h/p.whl"),
        ("# cmd: conda install http://bob:PW@host/chan::zlib", "# cmd: conda install http://host/chan::zlib"),
        ("git+ssh://git@github.com/o/r", "git+ssh://git@github.com/o/r"),
        (
            "https://conda.anaconda.org/t/tk-1/chan/noarch/x.conda",
            "https://conda.anaconda.org/chan/noarch/x.conda",
        ),
        ("see http://[::1 and https://TOKEN@github.com/x", "see http://[::1 and https://github.com/x"),
        ("9http://u:PW@h/x", "9http://h/x"),
        ("x" * 100 + "+ftp://u:PW@h/x", "x" * 100 + "+ftp://h/x"),  # a scheme longer than the bound
        ("a" * 50_000 + " @ https://u:PW@h/x", "a" * 50_000 + " @ https://h/x"),  # bench_sbom.py times it
    ],
)
def test_the_scrubber_finds_urls_inside_any_string(text, clean) -> None:
    from envguard.channels import scrub

    assert scrub(text) == clean


def test_envguard_caches_are_private(tmp_path, isolated_home, capsys) -> None:
    """envguard's own caches (the check cache, parsed locks, virtual packages) are 0600 in 0700 folders."""
    import stat

    prefix = _prefix(tmp_path)
    yml = tmp_path / "environment.yml"
    yml.write_text(ENV_YML)
    lock = tmp_path / "conda-lock.yml"
    envguard("lock", str(prefix), "--no-probe", "-o", str(lock))
    envguard("check", str(prefix), "--lock", str(lock))
    cache = isolated_home / ".cache" / "envguard"
    files = [p for p in cache.rglob("*") if p.is_file()]
    assert files, capsys.readouterr().err
    for path in [*files, *(p for p in cache.rglob("*") if p.is_dir()), cache]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode & 0o077 == 0, f"{path} is {oct(mode)}"
