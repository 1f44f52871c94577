"""`envguard verify` end to end: real locks from real local channels rebuilt with the embedded engine."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import shlex
import shutil
import sys
from pathlib import Path

import pytest
from rattler.index import index_fs

from tests.channel_server import SECRET, TOKEN, leaks
from tests.helpers import MakePrefix, envguard, fixture_channel, settled

SPECS = ["python=3.11", "numpy=1.26", "six", "zlib"]


def make_lock(folder: Path, channel: Path, specs: list[str] = SPECS) -> Path:
    """environment.yml -> conda-lock.yml with `envguard lock` (the CI flow)."""
    folder.mkdir(parents=True, exist_ok=True)
    yml = folder / "environment.yml"
    yml.write_text(
        "channels:\n  - "
        + channel.resolve().as_uri()
        + "\ndependencies:\n"
        + "".join(f"  - {s}\n" for s in specs)
    )
    lock = folder / "conda-lock.yml"
    assert envguard("lock", "-f", str(yml), "--no-cuda", "-o", str(lock)) == 0
    return lock


def verify_json(*args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, object], str]:
    code = envguard("verify", *args, "--json")
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip() else {}, err


def set_hash(lock: Path, package: str, digest: str) -> None:
    text = lock.read_text()
    start = text.index(f"- name: {package}\n")
    at = text.index("sha256: ", start) + len("sha256: ")
    lock.write_text(text[:at] + digest + text[at + 64 :])


def test_intact_lock_passes(
    channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], scratch: Path
) -> None:
    lock = make_lock(tmp_path, channels["forge"])
    capsys.readouterr()
    code, data, _ = verify_json("--lock", str(lock), capsys=capsys)
    assert code == 0
    assert data["schema_version"] == 1 and data["passed"] is True
    assert [(s["name"], s["status"]) for s in data["stages"]] == [
        ("hashes", "ok"),
        ("install", "ok"),
        ("check", "ok"),
    ]
    assert data["check"]["clean"] is True and data["prefix"] is None
    assert settled(scratch) == []  # the rebuilt prefix is removed without --keep


def test_tampered_lock_hash_fails_naming_the_package(
    channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = make_lock(tmp_path, channels["forge"])
    set_hash(lock, "numpy", "ab" * 32)
    capsys.readouterr()
    code, data, _ = verify_json("--lock", str(lock), capsys=capsys)
    assert code == 1 and data["passed"] is False
    assert [m["name"] for m in data["mismatches"]] == ["numpy"]
    assert data["mismatches"][0]["expected"] == "ab" * 32
    assert [s["status"] for s in data["stages"]] == ["failed", "skipped", "skipped"]
    assert "numpy 1.26.4 py311h64a7726_0" in str(data["verdict"])
    assert data["fix"] == [
        f"envguard lock -f {tmp_path / 'environment.yml'} -o {lock}   # if the new archives are intended",
        f"envguard verify --lock {lock}",
    ]
    assert envguard("verify", "--lock", str(lock), "--markdown") == 1
    markdown = capsys.readouterr().out
    assert "| `numpy 1.26.4 py311h64a7726_0` |" in markdown and markdown.startswith("### ❌ envguard verify")


def test_tampered_channel_archive_fails_naming_the_package(
    channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    forge = tmp_path / "channel" / "forge"
    shutil.copytree(channels["forge"], forge)
    lock = make_lock(tmp_path / "project", forge)
    recipes, _ = fixture_channel.load_recipes()
    six = next(r for r in recipes if r.name == "six")
    six.files = {"site-packages/six/__init__.py": "raise SystemExit('tampered')\n"}
    fixture_channel.build_package(six, forge)
    capsys.readouterr()
    code = envguard("verify", "--lock", str(lock))
    out = capsys.readouterr().out
    assert code == 1
    assert "FAIL (hashes): archive hash does not match the lock: six 1.16.0 pyh6c4a22f_0" in out
    relock = f"envguard lock -f {lock.parent / 'environment.yml'} -o {lock}"
    fixes = out.split("How to fix:\n", 1)[1].replace(" \\\n", " ")  # long lines joined as the shell does
    assert [" ".join(line.split()) for line in fixes.splitlines()] == [
        f"{relock} # if the new archives are intended",
        f"envguard verify --lock {lock}",
    ], out


def test_the_fix_lines_run_as_printed_after_a_rebuilt_package(
    channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The channel rebuilt six and indexed it again (an intended change): verify fails on its hash, and the
    two lines it prints, run as printed, re-lock and verify clean (issue 43)."""
    forge = tmp_path / "channel" / "forge"
    shutil.copytree(channels["forge"], forge)
    lock = make_lock(tmp_path / "project", forge)
    recipes, _ = fixture_channel.load_recipes()
    six = next(r for r in recipes if r.name == "six")
    six.files = {"site-packages/six/__init__.py": "__version__ = '1.16.0'  # rebuilt\n"}
    fixture_channel.build_package(six, forge)
    asyncio.run(index_fs(forge, force=True))  # the channel's index names the rebuilt archive
    capsys.readouterr()
    assert envguard("verify", "--lock", str(lock)) == 1
    out = capsys.readouterr().out.split("How to fix:\n", 1)[1]
    fixes = out.replace("\\\n", "").splitlines()  # a long line's continuations, as the shell reads them
    assert len(fixes) == 2 and fixes[0].lstrip().startswith("envguard lock -f"), fixes
    for line in fixes:
        argv = shlex.split(line, comments=True)
        code = envguard(*argv[1:])
        assert argv[0] == "envguard" and code == 0, (line, capsys.readouterr().out)


def test_version_edited_in_lock_is_bad_input(
    channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A version edited by hand no longer names the archive its URL points at: the lock contradicts itself
    (issue 28: a lock's identities must be the archives' own), refused at read, nothing built."""
    lock = make_lock(tmp_path, channels["forge"])
    text = lock.read_text()
    lock.write_text(text.replace("- name: six\n  version: 1.16.0", "- name: six\n  version: 1.17.0"))
    capsys.readouterr()
    assert envguard("verify", "--lock", str(lock)) == 2
    err = capsys.readouterr().err
    assert "six 1.17.0" in err and "its URL names another archive ('six-1.16.0-" in err, err


def test_offline_from_pkgs_dir_with_private_urls(
    channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = make_lock(tmp_path, channels["forge"])
    pkgs = tmp_path / "pkgs"
    pkgs.mkdir()
    for archive in channels["forge"].rglob("*.conda"):
        shutil.copy(archive, pkgs / archive.name)
    private = f"https://user:{SECRET}@conda.example.invalid/t/{TOKEN}/forge"
    lock.write_text(lock.read_text().replace(channels["forge"].resolve().as_uri(), private))
    code, data, err = verify_json("--lock", str(lock), "--pkgs-dir", str(pkgs), "--keep", capsys=capsys)
    assert code == 0, err
    kept = Path(str(data["prefix"]))
    try:
        assert leaks(json.dumps(data), err, folders=(kept, pkgs)) == []
        record = json.loads(next((kept / "conda-meta").glob("numpy-*.json")).read_text())
        assert record["url"].startswith("https://conda.example.invalid/forge/linux-64/numpy-1.26.4")
    finally:
        shutil.rmtree(kept.parent)


def test_missing_archive_offline_is_operational(
    channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = make_lock(tmp_path, channels["forge"])
    lock.write_text(
        lock.read_text().replace(channels["forge"].resolve().as_uri(), "https://conda.example.invalid/forge")
    )
    capsys.readouterr()
    assert envguard("verify", "--lock", str(lock), "--pkgs-dir", str(tmp_path / "empty")) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and re.search(
        r"cannot download https://conda\.example\.invalid/forge/\S+ .*in the package cache "
        + re.escape(str(tmp_path / "empty")),
        err[0],
    )


def test_keep_prints_and_keeps_the_prefix(
    channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = make_lock(tmp_path, channels["forge"])
    capsys.readouterr()
    assert envguard("verify", "--lock", str(lock), "--keep") == 0
    out = capsys.readouterr().out
    kept = Path(re.search(r"Rebuilt environment kept at (\S+)", out).group(1))  # type: ignore[union-attr]
    assert (kept / "conda-meta").is_dir() and "PASS:" in out
    shutil.rmtree(kept.parent)


def test_pip_wheel_locked_with_hash(
    channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = make_lock(tmp_path, channels["forge"], [*SPECS, "pip"])
    wheel = channels["wheels"] / "tinyproj-1.0.0-py3-none-any.whl"
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    entry = (
        f"- name: tinyproj\n  version: 1.0.0\n  manager: pip\n  platform: linux-64\n  dependencies: {{}}\n"
        f"  url: {wheel.resolve().as_uri()}\n  hash:\n    sha256: {digest}\n  category: main\n  optional: "
        "false\n"
    )
    lock.write_text(lock.read_text() + entry)
    code, data, err = verify_json("--lock", str(lock), capsys=capsys)
    assert code == 0, (data, err)
    assert "1 pip package" in str(data["stages"][1]["detail"])  # type: ignore[index]
    set_hash(lock, "tinyproj", "cd" * 32)
    code, data, _ = verify_json("--lock", str(lock), capsys=capsys)
    assert code == 1 and [m["name"] for m in data["mismatches"]] == ["tinyproj"]  # type: ignore[union-attr]


def test_bad_input(channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert envguard("verify", "--lock", str(tmp_path / "nope.yml")) == 2
    lock = make_lock(tmp_path, channels["forge"])
    assert envguard("verify", "--lock", str(tmp_path / "environment.yml")) == 2
    assert envguard("verify", "--lock", str(lock), "--platform", "osx-arm64") == 2
    assert envguard("verify", "--lock", str(lock), "--json", "--markdown") == 2
    err = capsys.readouterr().err
    assert "not a lock" in err and "osx-arm64" in err


def test_report_to_file(channels: dict[str, Path], tmp_path: Path) -> None:
    lock = make_lock(tmp_path, channels["forge"])
    report = tmp_path / "report.md"
    assert envguard("verify", "--lock", str(lock), "--markdown", "-o", str(report)) == 0
    assert report.read_text().startswith("### ✅ envguard verify")


def test_lock_written_by_create_verifies(
    channels: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONDA_OVERRIDE_CUDA", "12.4")
    yml = tmp_path / "environment.yml"
    yml.write_text(
        "channels:\n  - "
        + channels["pytorch"].resolve().as_uri()
        + "\n  - "
        + channels["forge"].resolve().as_uri()
        + "\ndependencies:\n  - python=3.11\n  - pytorch=2.1=*cuda11.8*\n"
    )
    assert envguard("create", "-f", str(yml)) == 0
    monkeypatch.chdir(tmp_path)
    assert envguard("verify") == 0


@pytest.mark.slow
def test_smoke_in_the_rebuilt_environment_against_recorded_fingerprints(
    make_prefix: MakePrefix, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prefix = make_prefix(["python=3.11", "numpy=1.26", "pytorch=2.1=*cpu*"], name="trained")
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(prefix), "-o", str(lock)) == 0  # live lock, fingerprints probed
    capsys.readouterr()
    code, data, err = verify_json("--lock", str(lock), "--smoke", "--smoke-budget", "5", capsys=capsys)
    assert code == 0, (data.get("verdict"), err)
    smoke = next(s for s in data["stages"] if s["name"] == "smoke")  # type: ignore[union-attr]
    assert smoke["status"] == "ok" and "streams match the lock's fingerprints" in smoke["detail"]
    assert data["smoke"]["torch"]  # type: ignore[index]


def test_other_platform_of_a_multi_platform_lock(
    channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    yml = tmp_path / "environment.yml"
    yml.write_text(
        f"channels:\n  - {channels['forge'].resolve().as_uri()}\ndependencies:\n  - cuda-version=11.8\n"
    )
    lock = tmp_path / "conda-lock.yml"
    assert (
        envguard(
            "lock",
            "-f",
            str(yml),
            "--platform",
            "osx-arm64",
            "--platform",
            "linux-64",
            "--no-cuda",
            "-o",
            str(lock),
        )
        == 0
    )
    capsys.readouterr()
    code, data, _ = verify_json("--lock", str(lock), "--platform", "osx-arm64", "--smoke", capsys=capsys)
    assert code == 0 and data["platform"] == "osx-arm64"
    assert data["stages"][-1] == {  # type: ignore[index]
        "name": "smoke",
        "status": "skipped",
        "seconds": 0.0,
        "detail": "osx-arm64 environments cannot run on this machine",
    }


@pytest.mark.parametrize(
    ("style", "start"), [("--markdown", "### ❌ envguard verify: error (exit 2)"), ("--json", "{")]
)
def test_the_report_file_is_written_on_failure_too(tmp_path: Path, style: str, start: str) -> None:
    """CI publishes the report with `if: always()`: a bad lock still leaves a file that says why."""
    report = tmp_path / "report.out"
    assert envguard("verify", "--lock", str(tmp_path / "nope.yml"), style, "-o", str(report)) == 2
    text = report.read_text()
    assert text.startswith(start) and "nope.yml" in text
    if style == "--json":
        data = json.loads(text)
        assert (data["passed"], data["exit_code"], data["schema_version"]) == (False, 2, 1)


def test_a_pkgs_dir_that_does_not_exist_yet_is_made(
    channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """issue 26: a CI cache that missed (`actions/cache` restored nothing) is where this run's archives go;
    a --pkgs-dir that is a file is bad input."""
    lock = make_lock(tmp_path, channels["forge"])
    missed = tmp_path / "home" / ".cache" / "restored-nothing" / "pkgs"
    capsys.readouterr()
    assert envguard("verify", "--lock", str(lock), "--pkgs-dir", str(missed)) == 0, capsys.readouterr().err
    assert sorted(p.name for p in missed.glob("*.conda"))  # the archives were kept there for the next run
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert envguard("verify", "--lock", str(lock), "--pkgs-dir", str(blocker)) == 2
    assert "is a file" in capsys.readouterr().err  # click says so, one line


def test_a_file_channel_verify_can_rerun_offline_from_its_cache(
    channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The archives verify proved stay in --pkgs-dir: a rerun needs neither the channel nor a network."""
    forge = tmp_path / "channel" / "forge"
    shutil.copytree(channels["forge"], forge)
    lock = make_lock(tmp_path / "project", forge)
    pkgs = tmp_path / "pkgs"
    assert envguard("verify", "--lock", str(lock), "--pkgs-dir", str(pkgs)) == 0
    shutil.rmtree(forge)  # the local channel is gone
    capsys.readouterr()
    assert envguard("verify", "--lock", str(lock), "--pkgs-dir", str(pkgs)) == 0, capsys.readouterr()


_EVENTS: list[tuple[str, str]] = []
_WATCHING: list[bool] = [False]  # the hook stays for the whole session: it records only during its own test


def _audit(event: str, args: tuple[object, ...]) -> None:
    if _WATCHING[0] and event in ("open", "os.rename") and args:
        _EVENTS.append((event, str(args[0])))


sys.addaudithook(_audit)  # the interpreter's own record of files opened and trees removed


def test_the_report_is_out_before_the_temporary_prefix_is_deleted(
    channels: dict[str, Path], tmp_path: Path, scratch: Path
) -> None:
    lock = make_lock(tmp_path, channels["forge"])
    report = tmp_path / "report.json"
    _EVENTS.clear()
    _WATCHING[0] = True
    try:
        assert envguard("verify", "--lock", str(lock), "--json", "-o", str(report)) == 0
    finally:
        _WATCHING[0] = False
    written = next(i for i, (e, p) in enumerate(_EVENTS) if e == "open" and ".report.json." in p)
    removed = next(  # moved into the trash, where a detached rm deletes it
        i for i, (e, p) in enumerate(_EVENTS) if e == "os.rename" and p.startswith(str(scratch))
    )
    assert written < removed, _EVENTS[min(written, removed) : max(written, removed) + 1]
    assert json.loads(report.read_text())["passed"] is True and settled(scratch) == []


def test_the_lock_is_parsed_once_per_content(
    channels: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """verify reads the lock through check's parse cache: a rerun of the same lock does not parse the YAML."""
    import envguard.check.run  # verify reads its target through check's, which parses on a miss

    lock = make_lock(tmp_path, channels["forge"])
    parsed: list[str] = []
    real = envguard.check.run.read_file

    def counted(path, **kwargs):  # type: ignore[no-untyped-def]
        parsed.append(str(path))
        return real(path, **kwargs)

    monkeypatch.setattr(envguard.check.run, "read_file", counted)
    for _ in range(2):
        code, data, _ = verify_json("--lock", str(lock), capsys=capsys)
        assert code == 0 and data["passed"] is True
    assert parsed.count(str(lock)) == 1
    lock.write_text(lock.read_text() + "\n")  # another content: parsed again
    assert verify_json("--lock", str(lock), capsys=capsys)[0] == 0 and parsed.count(str(lock)) == 2
