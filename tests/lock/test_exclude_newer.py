"""`envguard lock -f environment.yml --exclude-newer DATE`: a real channel whose records carry different
timestamps (and one none), solved as of a date by rattler; the date is kept in the lock, its Reproduce line,
and in the re-lock commands `check --lock-fresh` and `verify` print (which are run as printed)."""

from __future__ import annotations

import datetime
import json
import re
import shlex
import shutil
from pathlib import Path

import pytest

from envguard.engine.solver import parse_date
from envguard.errors import BadInputError
from envguard.formats.condalock import read as condalock
from tests.helpers import envguard, fixture_channel


def _ms(day: str) -> int:
    return int(datetime.datetime.fromisoformat(f"{day}T00:00:00+00:00").timestamp() * 1000)


@pytest.fixture(scope="module")
def dated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A channel: tool 1.0 (2024-01-10), tool 2.0 (2024-06-10), helper 1.0 (no timestamp)."""
    channel = tmp_path_factory.mktemp("dated") / "dated"
    Recipe = fixture_channel.Recipe
    for recipe in (
        Recipe(
            "tool",
            "1.0",
            "h0_0",
            subdir="noarch",
            noarch="generic",
            depends=["helper"],
            timestamp=_ms("2024-01-10"),
        ),
        Recipe(
            "tool",
            "2.0",
            "h0_0",
            subdir="noarch",
            noarch="generic",
            depends=["helper"],
            timestamp=_ms("2024-06-10"),
        ),
        Recipe("helper", "1.0", "h0_0", subdir="noarch", noarch="generic", timestamp=None),
    ):
        fixture_channel.build_package(recipe, channel)
    fixture_channel.index(channel)
    # rattler's indexer stamps every record with the time it indexed it (`indexed_timestamp`: the upload
    # time the cutoff prefers): make each one published when it was built, and the undated one undated
    noarch = channel / "noarch"
    repodata = json.loads((noarch / "repodata.json").read_text())
    for record in repodata["packages.conda"].values():
        record.pop("indexed_timestamp", None)
        if "timestamp" in record:
            record["indexed_timestamp"] = record["timestamp"]
    (noarch / "repodata.json").write_text(json.dumps(repodata))
    for stale in ("repodata.json.zst", "repodata_shards.msgpack.zst"):
        (noarch / stale).unlink()
    shutil.rmtree(noarch / "shards")
    return channel


def lock_as_of(folder: Path, channel: Path, *extra: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "environment.yml").write_text(f"channels:\n  - {channel.as_uri()}\ndependencies:\n  - tool\n")
    lock = folder / "conda-lock.yml"
    assert envguard("lock", "-f", str(folder / "environment.yml"), "--no-cuda", *extra, "-o", str(lock)) == 0
    return lock


def versions(lock: Path) -> dict[str, str]:
    return {p.name: p.version for p in condalock.read(lock, platform="linux-64").packages}


def test_a_date_before_a_release_leaves_it_out_and_names_undated_packages(
    dated: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert versions(lock_as_of(tmp_path / "now", dated)) == {"tool": "2.0", "helper": "1.0"}
    capsys.readouterr()
    lock = lock_as_of(tmp_path / "then", dated, "--exclude-newer", "2024-03-01")
    err = capsys.readouterr().err
    assert versions(lock) == {"tool": "1.0", "helper": "1.0"}
    assert "helper: no timestamp in the channel's records" in err and "tool" not in err.split("helper")[0]
    data = condalock.read_lock(lock)
    assert data.custom["envguard.exclude_newer"] == "2024-03-01T00:00:00Z"
    assert "--exclude-newer 2024-03-01T00:00:00Z" in data.custom["envguard.reproduce"]
    later = lock_as_of(tmp_path / "later", dated, "--exclude-newer", "2024-06-10T00:00:00Z")  # at the cutoff
    assert versions(later)["tool"] == "2.0"


def test_lock_fresh_and_verify_keep_the_date_in_the_relock_they_print(
    dated: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    lock = lock_as_of(tmp_path, dated, "--exclude-newer", "2024-03-01")
    (tmp_path / "environment.yml").write_text(
        f"channels:\n  - {dated.as_uri()}\ndependencies:\n  - tool >=1.5\n"
    )  # 1.0 is locked: stale
    capsys.readouterr()
    assert envguard("check", "--lock-fresh", "--lock", str(lock), "--json") == 1
    fix = json.loads(capsys.readouterr().out)["fix"]
    assert fix == [
        f"envguard lock -f {tmp_path / 'environment.yml'} --exclude-newer 2024-03-01T00:00:00Z -o {lock}"
    ]
    # run as printed: as of March tool>=1.5 does not exist yet, so the solve fails naming the spec
    assert envguard(*shlex.split(fix[0])[1:]) == 2
    assert "tool" in capsys.readouterr().err
    (tmp_path / "environment.yml").write_text(f"channels:\n  - {dated.as_uri()}\ndependencies:\n  - tool\n")
    text = lock.read_text()
    assert "- name: tool\n  version: '1.0'" in text
    # a hash the archive does not have: verify fails (a version edited alone is refused at read, exit 2)
    digest = re.search(r"sha256: ([0-9a-f]{64})", text[text.index("- name: tool") :])
    assert digest is not None
    lock.write_text(text.replace(digest.group(1), "ab" * 32))
    monkeypatch.chdir(tmp_path)
    assert envguard("verify", "--lock", str(lock), "--json") == 1
    fix = json.loads(capsys.readouterr().out)["fix"]
    assert fix[0].startswith(
        f"envguard lock -f {tmp_path / 'environment.yml'} --exclude-newer 2024-03-01T00:00:00Z"
    )
    assert envguard(*shlex.split(fix[0].split("   #")[0])[1:]) == 0
    assert versions(lock)["tool"] == "1.0"


def test_dates_are_read_strictly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert parse_date("2024-06-01") == datetime.datetime(2024, 6, 1, tzinfo=datetime.timezone.utc)
    assert parse_date("2024-06-01T14:00:00+02:00") == datetime.datetime(
        2024, 6, 1, 12, tzinfo=datetime.timezone.utc
    )
    for bad in ("2024-13-01", "yesterday", "2024-06-01T12:00:00"):
        with pytest.raises(BadInputError):
            parse_date(bad)
    assert envguard("lock", str(tmp_path), "--exclude-newer", "2024-06-01") == 2
    assert "apply to `-f environment.yml`" in capsys.readouterr().err
