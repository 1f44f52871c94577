"""`envguard check`: every drift of the issue's list, on real installed prefixes, with clear lines and exit 1;
no false alarm on an identical rebuild at another path."""

from __future__ import annotations

import csv
import json
import os
import re
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import MakePrefix, check_out, envguard, pip_install

BASE = ["python=3.11", "numpy=1.26", "pytorch=2.1.0=*cuda11.8*", "requests=2.32.3", "zlib"]
TINY = "tinyproj-1.0.0-py3-none-any.whl"


@pytest.fixture
def locked(make_prefix: MakePrefix, channels: dict[str, Path], tmp_path: Path) -> tuple[Path, Path]:
    """A real prefix (conda + a pip wheel from a local file) and its lock, the wheel's path included."""
    prefix = make_prefix(BASE, cuda="12.4")
    pip_install(prefix, str(channels["wheels"] / TINY))
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(prefix), "--no-probe", "--include-local", "-o", str(lock)) == 0
    return prefix, lock


def _pip_uninstall(prefix: Path, name: str) -> None:
    """Remove what pip installed, file by file from its RECORD, as `pip uninstall` does (pip itself refuses to
    uninstall outside its own environment, and a `--target` install lives outside it)."""
    site = next((prefix / "lib").glob("python3*/site-packages"))
    [dist] = site.glob(f"{name}-*.dist-info")
    for row in csv.reader((dist / "RECORD").read_text().splitlines()):
        (site / row[0]).unlink(missing_ok=True)
    for folder in sorted(
        {(site / row).parent for row in os.listdir(site) if row.startswith(name)}, reverse=True
    ):
        shutil.rmtree(folder / name, ignore_errors=True)
    shutil.rmtree(dist, ignore_errors=True)
    assert not list(site.glob(f"{name}*"))


Mutation = Callable[[MakePrefix, dict[str, Path], Path], None]
DRIFTS: dict[str, tuple[Mutation, list[str]]] = {
    "conda upgraded": (
        lambda mk, ch, p: mk([*BASE[:1], "numpy=2.0", *BASE[2:]], cuda="12.4"),
        [
            r"\[drift\] numpy \(\S+\): 1\.26\.4 py311h64a7726_0 in the lock → 2\.0\.1 py311hed25524_0 "
            r"installed \(version, build changed\)"
        ],
    ),
    "conda downgraded": (
        lambda mk, ch, p: mk([*BASE[:3], "requests=2.31.0", "zlib"], cuda="12.4"),
        [
            r"requests \(\S+\): 2\.32\.3 pyhd8ed1ab_0 in the lock → 2\.31\.0 pyhd8ed1ab_0 "
            r"installed \(version changed\)"
        ],
    ),
    "conda added": (
        lambda mk, ch, p: mk([*BASE, "six"], cuda="12.4"),
        [r"\[drift\] six 1\.16\.0 pyh6c4a22f_0 \(\S+forge\): installed, not in the lock"],
    ),
    "conda removed": (
        lambda mk, ch, p: mk([b for b in BASE if not b.startswith("requests")], cuda="12.4"),
        [r"\[drift\] requests 2\.32\.3 pyhd8ed1ab_0 \(\S+\): in the lock, not installed"],
    ),
    "same version, other channel": (
        lambda mk, ch, p: mk(BASE, cuda="12.4", use=("alt", "forge", "pytorch")),
        [
            r"zlib 1\.3\.1 h4ab18f5_1: \S+/forge in the lock → \S+/alt installed "
            r"\(channel(, hash)? changed\)"
        ],
    ),
    "CUDA build -> CPU build": (
        lambda mk, ch, p: mk([*BASE[:2], "pytorch=2.1.0=*cpu*", *BASE[3:]]),
        [
            r"pytorch 2\.1\.0 \(\S+\): py3\.11_cuda11\.8_cudnn8\.7\.0_0 in the lock → py3\.11_cpu_0 "
            r"installed \(build changed\)",
            r"\[drift\] torch build: cuda 11\.8 in the lock, cpu now",
        ],
    ),
    "CUDA toolkit changed": (
        lambda mk, ch, p: mk([*BASE[:2], "pytorch=2.1.0=*cuda12.1*", *BASE[3:]], cuda="12.4"),
        [
            r"\[drift\] CUDA toolkit: 11\.8 in the lock, 12\.1 now",
            r"cudatoolkit 11\.8\.0 \S+ \(\S+\): in the lock",
        ],
    ),
    "python changed": (
        lambda mk, ch, p: mk(["python=3.12", "numpy=1.26", "pytorch", "requests=2.32.3", "zlib"]),
        [r"\[drift\] python: 3\.11\.9 in the lock, 3\.12\.4 now"],
    ),
    "pip added": (
        lambda mk, ch, p: pip_install(p, str(ch["wheels"] / "other_pkg-0.3.0-py3-none-any.whl")),
        [
            r"\[drift\] other-pkg \(pip\) 0\.3\.0 from file:///\S+other_pkg-0\.3\.0\S+: installed, not in "
            r"the lock"
        ],
    ),
    "pip removed": (
        lambda mk, ch, p: _pip_uninstall(p, "tinyproj"),
        [r"\[drift\] tinyproj \(pip\) 1\.0\.0 from \S+: in the lock, not installed"],
    ),
    "pip changed": (
        lambda mk, ch, p: pip_install(p, "--upgrade", str(ch["wheels"] / "tinyproj-1.1.0-py3-none-any.whl")),
        [
            r"tinyproj \(pip\): 1\.0\.0 from \S+ in the lock, 1\.1\.0 from \S+ installed \(version, url "
            r"changed\)"
        ],
    ),
}


@pytest.mark.parametrize("drift", sorted(DRIFTS))
def test_drift_is_caught(
    drift: str,
    locked: tuple[Path, Path],
    make_prefix: MakePrefix,
    channels: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    prefix, lock = locked
    assert check_out(prefix, lock, capsys) == (0, f"OK: {prefix} matches {lock}\n")
    mutate, expected = DRIFTS[drift]
    mutate(make_prefix, channels, prefix)
    code, out = check_out(prefix, lock, capsys)
    assert code == 1, out
    for pattern in expected:
        assert re.search(pattern, out), f"{pattern!r} not in:\n{out}"
    [verdict] = [line for line in out.splitlines() if line.startswith("DRIFT: ")]
    assert verdict.endswith(f"between {prefix} and {lock}")
    fix = out.split("\nHow to fix:\n", 1)[1].splitlines()  # the report ends with the commands that fix it
    assert fix == [f"  envguard sync {prefix} --lock {lock} --yes"], out  # no pip in this prefix: one line
    code, text = check_out(prefix, lock, capsys, "--json")
    data = json.loads(text)
    assert code == 1 and data["schema_version"] == 1 and data["clean"] is False
    assert data["fix"] == [fix[0].strip()]
    # issue 26: the line runs as printed and repairs the drift in place
    assert envguard(*shlex.split(fix[0])[1:]) == 0, capsys.readouterr()
    assert check_out(prefix, lock, capsys, "--files") == (0, f"OK: {prefix} matches {lock}\n")


def test_json_findings_are_structured(
    locked: tuple[Path, Path], make_prefix: MakePrefix, capsys: pytest.CaptureFixture[str]
) -> None:
    """A CI bot reads name, field, the lock's value and the installed one without parsing a sentence."""
    prefix, lock = locked
    make_prefix([*BASE[:1], "numpy=2.0", *BASE[2:]], cuda="12.4")
    _pip_uninstall(prefix, "tinyproj")
    code, text = check_out(prefix, lock, capsys, "--json")
    findings = json.loads(text)["findings"]
    [numpy] = [f for f in findings["conda"] if f["name"] == "numpy"]
    assert code == 1 and (numpy["category"], numpy["kind"], numpy["field"]) == ("conda", "changed", "version")
    assert (numpy["expected"], numpy["actual"]) == ("1.26.4", "2.0.1")
    assert numpy["severity"] == "drift" and numpy["message"].startswith("numpy (")  # the one wording
    assert "1.26.4 py311h64a7726_0 in the lock → 2.0.1 " in numpy["message"]
    [tiny] = findings["pip"]
    assert (tiny["name"], tiny["kind"], tiny["field"]) == ("tinyproj", "only-a", None)
    assert (tiny["expected"], tiny["actual"]) == ("1.0.0", None)


def test_the_fix_lines_name_sync_then_pip_with_real_requirements(
    make_prefix: MakePrefix, channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """In an environment with pip of its own, the sync line comes first, then the pip lines (each a no-op once
    the sync has run): the wheel's own URL, never a bare `file:`, every argument quoted."""
    prefix = make_prefix([*BASE, "pip"], cuda="12.4")
    pip_install(prefix, str(channels["wheels"] / TINY))
    lock = tmp_path / "my lock.yml"
    assert envguard("lock", str(prefix), "--no-probe", "--include-local", "-o", str(lock)) == 0
    make_prefix([*BASE[:1], "numpy=2.0", *BASE[2:], "pip", "six"], cuda="12.4")
    pip_install(prefix, "--upgrade", str(channels["wheels"] / "tinyproj-1.1.0-py3-none-any.whl"))
    pip_install(prefix, str(channels["wheels"] / "other_pkg-0.3.0-py3-none-any.whl"))
    code, out = check_out(prefix, lock, capsys)
    fix = out.split("\nHow to fix:\n", 1)[1].splitlines()
    wheel = (channels["wheels"] / TINY).as_uri()  # the lock recorded pip's direct URL: the fix reinstalls it
    python = f"{prefix}/bin/python"
    assert code == 1 and fix == [
        f"  envguard sync {prefix} --lock '{lock}' --yes",
        f"  {python} -m pip install --no-deps 'tinyproj @ {wheel}'",
        f"  {python} -m pip uninstall -y other-pkg",
    ], out
    # the prefix's bin/python is the test's own interpreter (the fixture channel's launcher), so only the sync
    # line runs here; tests/sync runs every printed line in real venvs
    assert envguard(*shlex.split(fix[0])[1:]) == 0, capsys.readouterr()
    assert check_out(prefix, lock, capsys) == (0, f"OK: {prefix} matches {lock}\n")


def test_no_false_alarm_on_identical_rebuild_at_another_path(
    locked: tuple[Path, Path],
    make_prefix: MakePrefix,
    channels: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    _prefix, lock = locked
    rebuild = make_prefix(BASE, name="rebuild", cuda="12.4")
    pip_install(rebuild, str(channels["wheels"] / TINY))
    code, out = check_out(rebuild, lock, capsys, "--files")
    assert (code, out.splitlines()[-1]) == (0, f"OK: {rebuild} matches {lock}"), out


def test_tampered_and_missing_files_with_files(
    locked: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    prefix, lock = locked
    init = next((prefix / "lib").glob("python3.11/site-packages/numpy/__init__.py"))
    edited = init.read_text() + "# edited\n"
    init.unlink()  # installed files are hardlinks into the shared package cache: never edit them in place
    init.write_text(edited)
    (prefix / "share" / "zlib" / "zlib-1.3.1.txt").unlink()
    assert check_out(prefix, lock, capsys)[0] == 0  # package metadata is untouched: only --files can see this
    code, out = check_out(prefix, lock, capsys, "--files")
    assert code == 1
    assert re.search(
        r"\[drift\] lib/python3\.11/site-packages/numpy/__init__\.py \(numpy\S*\): altered", out
    ), out
    assert re.search(r"\[drift\] share/zlib/zlib-1\.3\.1\.txt \(zlib\S*\): missing", out), out
    assert "Installed files" in out
    fix = out.split("\nHow to fix:\n", 1)[1].splitlines()
    assert fix == [f"  envguard sync {prefix} --lock {lock} --files --yes"], out
    assert envguard(*shlex.split(fix[0])[1:]) == 0, capsys.readouterr()  # the two packages reinstalled
    assert check_out(prefix, lock, capsys, "--files") == (0, f"OK: {prefix} matches {lock}\n")


def test_check_against_environment_yml(
    make_prefix: MakePrefix, channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prefix = make_prefix(["python=3.11", "numpy=1.26", "zlib"], use=("alt", "forge"))
    spec = tmp_path / "environment.yml"
    spec.write_text(
        f"channels:\n  - {channels['alt'].as_uri()}\n  - {channels['forge'].as_uri()}\n"
        "dependencies:\n  - python=3.11\n  - numpy>=1.21,<2\n  - zlib\n"
    )
    capsys.readouterr()
    assert envguard("check", str(prefix), "-f", str(spec)) == 0
    assert capsys.readouterr().out.startswith(f"OK: {prefix} matches {spec}")
    spec.write_text(
        f"channels:\n  - {channels['forge'].as_uri()}\ndependencies:\n  - python=3.12\n  - numpy\n"
    )
    assert envguard("check", str(prefix), "-f", str(spec)) == 1
    out = capsys.readouterr().out
    assert "[drift] python=3.12: not satisfied (installed: python 3.11.9" in out
    assert re.search(r"\[drift\] zlib: comes from \S+/alt, but environment.yml allows \S+/forge", out), out
    fix = out.split("\nHow to fix:\n", 1)[1].splitlines()
    assert fix == [f"  envguard create -f {spec} -p {prefix} --force"], out  # no lock: rebuilt from the file
    assert envguard(*shlex.split(fix[0])[1:]) == 0, capsys.readouterr()
    assert envguard("check", str(prefix), "-f", str(spec)) == 0, capsys.readouterr().out


def test_bad_target_is_exit_2(
    tmp_path: Path, make_prefix: MakePrefix, capsys: pytest.CaptureFixture[str]
) -> None:
    prefix = make_prefix(["zlib"])
    assert envguard("check", str(prefix), "--lock", str(tmp_path / "nope.yml")) == 2
    assert "no such lock file" in capsys.readouterr().err
    broken = tmp_path / "conda-lock.yml"
    broken.write_text("version: 1\nmetadata:\n  content_hash: {linux-64: x\n")
    assert envguard("check", str(prefix), "--lock", str(broken)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "malformed YAML" in err


def test_machine_differences_are_notes_not_drift() -> None:
    from envguard.check.report import check_environment
    from envguard.model import Package, VirtualPackage, make_environment

    packages = [Package("conda", "zlib", "1.3.1", "h4ab18f5_1", channel="conda-forge", subdir="linux-64")]
    made_for = (
        VirtualPackage("__cuda", "12.1"),
        VirtualPackage("__glibc", "2.28"),
        VirtualPackage("__archspec", "1", "x86_64"),
    )
    target = make_environment(
        kind="conda-lock", source="conda-lock.yml", packages=packages, virtual_packages=made_for
    )
    here = (VirtualPackage("__glibc", "2.17"), VirtualPackage("__archspec", "1", "icelake"))
    live = make_environment(kind="prefix", source="/envs/x", packages=packages, virtual_packages=here)
    report = check_environment(live, target)
    assert report.clean and [f.message() for f in report.findings] == [
        "the lock was made for __cuda 12.1; this machine has none",
        "the lock was made for __glibc 2.28; this machine has 2.17",
    ]
    newer = (VirtualPackage("__glibc", "2.36"), VirtualPackage("__cuda", "12.4"))
    assert (
        check_environment(
            make_environment(kind="prefix", packages=packages, virtual_packages=newer), target
        ).findings
        == ()
    )


def test_explicit_files_and_snapshots_are_accepted_as_locks(
    make_prefix: MakePrefix, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prefix = make_prefix(["python=3.11", "numpy=1.26", "zlib"])
    explicit, snapshot = tmp_path / "conda-linux-64.lock", tmp_path / "snapshot.json"
    assert envguard("lock", str(prefix), "--no-probe", "--format", "explicit", "-o", str(explicit)) == 0
    assert envguard("snapshot", str(prefix), "--no-probe", "-o", str(snapshot)) == 0
    for lock in (explicit, snapshot):
        assert check_out(prefix, lock, capsys)[0] == 0, lock
    make_prefix(["python=3.11", "numpy=2.0", "zlib"])
    for lock in (explicit, snapshot):
        code, out = check_out(prefix, lock, capsys)
        assert code == 1 and re.search(r"\[drift\] numpy( \(\S+\))?: 1\.26\.4 ", out), out
    assert (
        "in the reference → 2.0.1 " in out
        and f"and {snapshot}\nHow to fix:\n  envguard sync {prefix} " in out
    )
    assert envguard("sync", str(prefix), "--lock", str(snapshot), "--yes") == 0  # a snapshot is a lock too
    assert check_out(prefix, explicit, capsys)[0] == 0
