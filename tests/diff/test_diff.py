"""`envguard diff A B`: two-way, grouped, for any pair of sources; satisfaction for environment.yml; both
comparison engines agree."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envguard.diff.compare import Engine, aligned_views, deepdiff_leaves, exact, fast_leaves, narrowed
from envguard.diff.run import diff_environments
from envguard.model import Environment, Package, PipOrigin, make_environment
from envguard.sources import read_live
from tests.helpers import MakePrefix, envguard, fixture_channel, pip_install

BASE = ["python=3.11", "numpy=1.26", "pytorch=2.1.0=*cuda11.8*", "requests=2.32.3"]


def _json_diff(
    a: str, b: str, capsys: pytest.CaptureFixture[str], *extra: str
) -> tuple[int, dict[str, object]]:
    code = envguard("diff", a, b, "--json", *extra)
    data = json.loads(capsys.readouterr().out)
    assert data["schema_version"] == 1
    return code, data


def test_two_live_environments_two_way(make_prefix: MakePrefix, capsys: pytest.CaptureFixture[str]) -> None:
    a = make_prefix(BASE, name="a", cuda="12.4")
    b = make_prefix(["python=3.11", "numpy=2.0", "pytorch=2.1.0=*cpu*", "requests=2.31.0", "six"], name="b")
    code, data = _json_diff(str(a), str(b), capsys)
    assert code == 1 and data["equal"] is False and data["mode"] == "exact"
    changes = data["changes"]
    assert isinstance(changes, dict)
    conda = {c["name"]: c for c in changes["conda"]}
    assert conda["six"]["kind"] == "only-b" and conda["cudatoolkit"]["kind"] == "only-a"
    assert conda["numpy"]["fields"] == ["version", "build"] and conda["requests"]["fields"] == ["version"]
    assert conda["pytorch"]["fields"] == ["build"]  # same version, CUDA -> CPU build
    numpy = conda["numpy"]  # structured: raw values, no preformatted text to parse
    assert (numpy["category"], numpy["field"], numpy["expected"], numpy["actual"]) == (
        "conda",
        "version",
        "1.26.4",
        "2.0.1",
    )
    assert numpy["values"]["build"]["actual"] == "py311hed25524_0" and numpy["message"].startswith("numpy: ")
    assert (conda["six"]["field"], conda["six"]["expected"], conda["six"]["actual"]) == (None, None, "1.16.0")
    assert conda["pytorch"]["field"] == "build" and "cpu" in conda["pytorch"]["actual"]
    cuda = {c["name"]: c for c in changes["cuda"]}
    assert (cuda["torch build"]["a"], cuda["torch build"]["b"]) == ("cuda 11.8", "cpu")
    assert cuda["toolkit"]["kind"] == "only-a"
    assert envguard("diff", str(a), str(b)) == 1
    table = capsys.readouterr().out
    assert "Conda packages" in table and "CUDA" in table and table.rstrip().endswith("between A and B")


def test_identical_rebuild_at_another_path_is_equal(
    make_prefix: MakePrefix, channels: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    wheel = str(channels["wheels"] / "tinyproj-1.1.0-py3-none-any.whl")
    a, b = make_prefix(BASE, name="a", cuda="12.4"), make_prefix(BASE, name="b", cuda="12.4")
    pip_install(a, wheel)
    pip_install(b, wheel)
    code, data = _json_diff(str(a), str(b), capsys)
    assert code == 0 and data["equal"] is True and data["changes"] == {}
    assert envguard("diff", str(a), str(b), "--markdown") == 0
    assert "✅ envguard diff" in capsys.readouterr().out


def test_pip_changes_and_both_managers(
    make_prefix: MakePrefix, channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wheels = channels["wheels"]
    six_wheel = fixture_channel.build_wheel("six", "1.17.0", tmp_path / "extra-wheels")
    a, b = make_prefix(["python=3.11", "six"], name="a"), make_prefix(["python=3.11", "six"], name="b")
    pip_install(
        a, str(wheels / "tinyproj-1.0.0-py3-none-any.whl"), str(wheels / "other_pkg-0.3.0-py3-none-any.whl")
    )
    pip_install(b, str(wheels / "tinyproj-1.1.0-py3-none-any.whl"), str(six_wheel))
    code, data = _json_diff(str(a), str(b), capsys)
    assert code == 1
    changes = data["changes"]
    assert isinstance(changes, dict)
    pip = {c["name"]: c for c in changes["pip"]}
    assert pip["tinyproj"]["kind"] == "changed" and pip["tinyproj"]["fields"] == ["version", "url"]
    assert pip["other-pkg"]["kind"] == "only-a" and pip["six"]["kind"] == "only-b"
    [hazard] = changes["both-managers"]
    assert hazard["name"] == "six" and hazard["a"] is None and hazard["b"] == "conda 1.16.0 + pip 1.17.0"


def test_files_and_snapshots_compare_with_live(
    make_prefix: MakePrefix, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prefix = make_prefix(BASE, cuda="12.4")
    lock, explicit, snap = tmp_path / "conda-lock.yml", tmp_path / "spec.txt", tmp_path / "snap.json"
    assert envguard("lock", str(prefix), "--no-probe", "-o", str(lock)) == 0
    assert envguard("lock", str(prefix), "--no-probe", "--format", "explicit", "-o", str(explicit)) == 0
    assert envguard("snapshot", str(prefix), "--no-probe", "-o", str(snap)) == 0
    for other in (lock, explicit, snap):
        assert envguard("diff", str(other), str(prefix), "--platform", "linux-64") == 0, other
    capsys.readouterr()
    make_prefix(["python=3.11", "numpy=2.0", "requests=2.32.3"], cuda="12.4")  # the environment moves on
    code, data = _json_diff(str(lock), str(prefix), capsys, "--platform", "linux-64")
    assert code == 1 and {"conda", "cuda"} <= set(data["changes"])  # type: ignore[arg-type]


def test_environment_yml_is_compared_by_satisfaction(
    make_prefix: MakePrefix, channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prefix = make_prefix(
        ["python=3.11", "numpy=2.0", "zlib"], use=("alt", "forge")
    )  # alt first: its zlib wins
    spec = tmp_path / "environment.yml"
    spec.write_text(
        f"channels:\n  - {channels['forge'].as_uri()}\ndependencies:\n  - python=3.11\n  - numpy<2\n"
        "  - zlib\n  - pip:\n    - tinyproj==1.0.0\n    - -e ./local\n"
    )
    code, data = _json_diff(str(spec), str(prefix), capsys)
    assert code == 1 and data["mode"] == "satisfaction"
    changes = data["changes"]
    assert isinstance(changes, dict)
    specs = {c["name"]: c for c in changes["specs"]}
    assert specs["numpy<2"]["kind"] == "unsatisfied" and "2.0.1" in specs["numpy<2"]["b"]
    assert specs["tinyproj==1.0.0"]["b"] == "not installed"
    assert specs["-e ./local"]["kind"] == "unjudged" and "python=3.11" not in specs
    [channel] = changes["channels"]
    assert channel["name"] == "zlib" and channel["b"] == f"from {channels['alt'].as_uri()}"
    # the same file against itself, reordered: spec sets are equal
    other = tmp_path / "other.yml"
    other.write_text(
        spec.read_text().replace("  - python=3.11\n  - numpy<2\n", "  - numpy<2\n  - python=3.11\n")
    )
    assert envguard("diff", str(spec), str(other)) == 0


ENGINE_PAIRS = [
    (BASE, ["python=3.11", "numpy=2.0", "pytorch=2.1.0=*cpu*", "six"]),
    (["python=3.11", "requests=2.31.0"], ["python=3.12", "numpy=2.0", "requests=2.32.3"]),
    (["zlib"], ["zlib"]),
]


@pytest.mark.parametrize("pair", range(len(ENGINE_PAIRS)))
def test_engines_agree_on_real_environments(make_prefix: MakePrefix, pair: int) -> None:
    specs_a, specs_b = ENGINE_PAIRS[pair]
    a = read_live(make_prefix(specs_a, name="a", cuda="12.4"))
    b = read_live(make_prefix(specs_b, name="b"))
    assert diff_environments(a, b, engine="deepdiff") == diff_environments(a, b, engine="fast")


_text = st.text("ab12.", max_size=3)
_record = st.dictionaries(st.sampled_from(["version", "build", "channel", "value"]), _text, max_size=4)
_view = st.fixed_dictionaries(
    {
        c: st.dictionaries(st.sampled_from(["x", "y", "z"]), _record, max_size=3)
        for c in ("conda", "pip", "cuda")
    }
)


@settings(max_examples=200, deadline=None)
@given(_view, _view)
def test_engines_agree_on_any_views(
    a: dict[str, dict[str, dict[str, str]]], b: dict[str, dict[str, dict[str, str]]]
) -> None:
    assert fast_leaves(a, b) == deepdiff_leaves(a, b)


def _diff_process(a: Path, b: Path) -> tuple[int, str, set[str]]:
    """`envguard diff A B --json` as a fresh process: exit code, output, and the modules it imported
    (`-X importtime` lists every module as it is imported; the process ends without finalising)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "envguard", "diff", str(a), str(b), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    modules = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert "envguard.diff.compare" in modules, done.stderr[-2000:]
    return done.returncode, done.stdout, modules


def test_identical_environments_never_import_deepdiff(make_prefix: MakePrefix) -> None:
    a, b = make_prefix(BASE, name="a", cuda="12.4"), make_prefix(BASE, name="b", cuda="12.4")
    code, out, modules = _diff_process(a, b)
    assert (code, "deepdiff" in modules) == (0, False) and json.loads(out)["equal"] is True
    other = make_prefix(["python=3.11", "numpy=2.0", "requests=2.32.3"], name="c", cuda="12.4")
    code, out, modules = _diff_process(a, other)  # something to explain: deepdiff explains it
    assert (code, "deepdiff" in modules) == (1, True) and json.loads(out)["equal"] is False


def test_deepdiff_sees_only_the_differing_items(make_prefix: MakePrefix) -> None:
    a = read_live(make_prefix(BASE, name="a", cuda="12.4"))
    b = read_live(make_prefix(["python=3.11", "numpy=2.0", "pytorch=2.1.0=*cpu*", "six"], name="b"))
    view_a, view_b, _notes = aligned_views(a, b)
    leaves = fast_leaves(view_a, view_b)
    small_a, small_b = narrowed(view_a, view_b, leaves)
    names = {(c, n) for c, n, _f, _k in leaves}
    kept = {(c, n) for view in (small_a, small_b) for c in view for n in view[c]}
    assert kept == names
    assert ("conda", "python") not in names and ("conda", "six") in names  # the same python is left out
    assert deepdiff_leaves(small_a, small_b) == deepdiff_leaves(view_a, view_b) == leaves


@settings(max_examples=200, deadline=None)
@given(_view, _view)
def test_narrowed_views_give_deepdiff_the_same_leaves(
    a: dict[str, dict[str, dict[str, str]]], b: dict[str, dict[str, dict[str, str]]]
) -> None:
    leaves = fast_leaves(a, b)
    assert deepdiff_leaves(*narrowed(a, b, leaves)) == deepdiff_leaves(a, b) == leaves


WHEEL = "http://127.0.0.1:8765/packages/torchish-2.13.0+cpu-py3-none-any.whl"


def _pip_env(kind: str, package: Package) -> Environment:
    return make_environment(kind=kind, source=kind, packages=(package,))


@pytest.mark.parametrize("engine", ["fast", "deepdiff"])
def test_a_wheel_installed_from_the_url_its_lock_entry_names_is_no_drift(engine: Engine) -> None:
    """conda-lock install hands pip `NAME @ URL#sha256=...`: pip records that URL (direct_url.json) for the
    very file the lock names as the package's wheel (issue 39); another URL is still a change."""
    sha = "ab" * 32
    locked = Package("pip", "torchish", "2.13.0+cpu", url=WHEEL, sha256=sha)
    installed = Package("pip", "torchish", "2.13.0+cpu", sha256=sha, origin=PipOrigin(url=WHEEL))
    assert exact(_pip_env("lock", locked), _pip_env("prefix", installed), engine=engine).changes == ()
    assert exact(_pip_env("prefix", installed), _pip_env("lock", locked), engine=engine).changes == ()
    elsewhere = dataclasses.replace(installed, origin=PipOrigin(url=WHEEL.replace("8765", "9999")))
    (change,) = exact(_pip_env("lock", locked), _pip_env("prefix", elsewhere), engine=engine).changes
    assert change.name == "torchish" and change.fields == ("url",)
    from_git = dataclasses.replace(installed, origin=PipOrigin(url=WHEEL, vcs="git"))  # not a plain archive
    assert exact(_pip_env("lock", locked), _pip_env("prefix", from_git), engine=engine).changes != ()
