"""envguard reads what the real conda writes: `conda export --format rattler-lock-v6` (a pixi.lock without
`subdir`, which py-rattler 0.28 refuses on its own), `--format conda-lock-v1`, `conda env export`
(with and without `--from-history`, `--no-builds`) and `conda list --explicit`; and envguard's snapshot of a
conda-made environment is exactly `conda list --json`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from envguard.formats.pixilock import with_subdirs
from tests.helpers import envguard
from tests.realconda import Conda, same_packages

pytestmark = pytest.mark.slow


def snapshot(source: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    capsys.readouterr()
    code = envguard("snapshot", str(source), "--no-probe")
    captured = capsys.readouterr()
    assert code == 0, captured.err
    data: dict[str, object] = json.loads(captured.out)
    return data


@pytest.fixture
def made(conda: Conda, tmp_path: Path) -> Path:
    prefix = tmp_path / "env"
    conda.run("create", "--yes", "--prefix", str(prefix), "python=3.11", "numpy=1.26", "six")
    return prefix


def test_a_pixi_lock_conda_exported_is_readable(
    conda: Conda, made: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = tmp_path / "pixi.lock"
    conda.run("export", "-p", str(made), "--format", "rattler-lock-v6", "--file", str(lock))
    assert "subdir" not in lock.read_text()  # what makes py-rattler refuse it
    data = snapshot(lock, capsys)
    assert data["kind"] == "pixi-lock"
    same_packages(conda.listed(made), data)
    packages = data["packages"]
    assert isinstance(packages, list)
    assert all(p["subdir"] in ("linux-64", "noarch") and p["sha256"] and p["url"] for p in packages)
    capsys.readouterr()
    assert envguard("check", str(made), "--lock", str(lock)) == 0, capsys.readouterr().out
    assert envguard("diff", str(made), str(lock)) == 0, capsys.readouterr().out


def test_a_conda_lock_v1_conda_exported_is_readable(
    conda: Conda, made: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = tmp_path / "conda-lock.yml"
    conda.run("export", "-p", str(made), "--format", "conda-lock-v1", "--file", str(lock))
    same_packages(conda.listed(made), snapshot(lock, capsys))
    capsys.readouterr()
    assert envguard("check", str(made), "--lock", str(lock)) == 0, capsys.readouterr().out


@pytest.mark.parametrize("flags", [(), ("--from-history",), ("--no-builds",)])
def test_conda_env_export_is_readable_and_checks_clean(
    conda: Conda, made: Path, tmp_path: Path, flags: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    yml = tmp_path / "environment.yml"
    yml.write_text(conda.run("env", "export", "-p", str(made), *flags).stdout)
    data = snapshot(yml, capsys)
    assert data["kind"] == "environment.yml"
    capsys.readouterr()
    assert envguard("check", str(made), "-f", str(yml)) == 0, capsys.readouterr().out


def test_explicit_list_and_snapshot_agree_with_conda(
    conda: Conda, made: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    explicit = tmp_path / "explicit.txt"
    explicit.write_text(conda.run("list", "--explicit", "--md5", "-p", str(made)).stdout)
    same_packages(conda.listed(made), snapshot(explicit, capsys))
    same_packages(conda.listed(made), snapshot(made, capsys))
    clone = tmp_path / "clone"
    conda.run("create", "--yes", "--prefix", str(clone), "--clone", str(made))
    same_packages(conda.listed(clone), snapshot(clone, capsys))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["linux-64", "noarch", "osx-arm64", "win-64"]),
            st.from_regex(r"[a-z][a-z0-9-]{0,12}", fullmatch=True),
            st.booleans(),
            st.booleans(),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_with_subdirs_adds_exactly_the_missing_subdirs(items: list[tuple[str, str, bool, bool]]) -> None:
    lines = ["version: 6", "environments:", "  default:", "    packages:", "      linux-64:"]
    lines += [f"        - conda: file:///c/{sub}/{name}-1-0.conda" for sub, name, _, _ in items]
    lines.append("packages:")
    for sub, name, folded, has_subdir in items:
        url = f"file:///c/{sub}/{name}-1-0.conda"
        lines += ["  - conda: ", f"      {url}"] if folded else [f"  - conda: {url}"]
        lines += [f"    subdir: {sub}"] * has_subdir + [
            "    build_number: 0",
            "    depends:",
            "      - python",
        ]
    text = "\n".join(lines) + "\n"
    patched = with_subdirs(text)
    data = yaml.safe_load(patched)
    assert [p["subdir"] for p in data["packages"]] == [sub for sub, _, _, _ in items]
    assert data["environments"] == yaml.safe_load(text)["environments"]
    assert with_subdirs(patched) == patched


def test_diff_pairs_a_package_across_spec_styles(
    conda: Conda, made: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    full, no_builds = tmp_path / "full.yml", tmp_path / "no-builds.yml"
    full.write_text(conda.run("env", "export", "-p", str(made)).stdout)
    no_builds.write_text(conda.run("env", "export", "-p", str(made), "--no-builds").stdout)
    capsys.readouterr()
    assert envguard("diff", str(full), str(no_builds), "--json") == 1
    data = json.loads(capsys.readouterr().out)
    changes = data["changes"]["specs"]
    names = sorted(p["name"] for p in conda.listed(made))
    assert sorted(c["name"] for c in changes) == names, changes
    assert {c["kind"] for c in changes} == {"changed"}, "paired by name, not one only-in-A and one only-in-B"
    numpy = next(c for c in changes if c["name"] == "numpy")
    assert numpy["a"] == "conda numpy=1.26.4=py311h64a7726_0" and numpy["b"] == "conda numpy=1.26.4"
    capsys.readouterr()
    assert envguard("diff", str(full), str(full)) == 0


def test_check_files_of_a_conda_made_env_with_noarch_python_packages(
    conda: Conda, made: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # conda 26 records noarch: python files in paths_data by their package path (`site-packages/six/...`)
    lock = tmp_path / "conda-lock.yml"
    assert envguard("lock", str(made), "--no-probe", "-o", str(lock)) == 0
    capsys.readouterr()
    assert envguard("check", str(made), "--lock", str(lock), "--files") == 0, capsys.readouterr().out
    module = next((made / "lib").glob("python3.11/site-packages/six/__init__.py"))
    module.write_text("tampered = True\n")
    capsys.readouterr()
    assert envguard("check", str(made), "--lock", str(lock), "--files") == 1
    out = capsys.readouterr().out
    assert "lib/python3.11/site-packages/six/__init__.py" in out and "altered" in out, out
