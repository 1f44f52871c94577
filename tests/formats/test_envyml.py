"""environment.yml in its real-world shapes."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from envguard.errors import BadInputError
from envguard.formats import envyml
from tests.helpers import REPO, envguard

BASIC = """\
name: demo
channels:
  - conda-forge
  - https://user:secret@example.com/t/tk-123/private
dependencies:
  - python=3.11
  - conda-forge::numpy >=1.21,<2
  - pytorch=2.1=*cuda*
  - pip:
    - --extra-index-url https://user:pw@download.pytorch.org/whl/cu121
    - torch==2.4.0+cu121
    - -e .
  - zlib
  - pip:
    - requests>=2
"""


def specs(env, manager):
    return [r.spec for r in env.requested if r.manager == manager]


def test_basic_file_keeps_every_pip_block_and_warns() -> None:
    env = envyml.parse(BASIC, "env.yml", platform="linux-64")
    assert env.kind == "environment.yml" and env.spec_only
    assert env.name == "demo" and env.python == "3.11"
    assert specs(env, "conda") == [
        "python=3.11",
        "conda-forge::numpy >=1.21,<2",
        "pytorch=2.1=*cuda*",
        "zlib",
    ]
    assert specs(env, "pip") == ["torch==2.4.0+cu121", "-e .", "requests>=2"]
    assert env.pip_options == ("--extra-index-url https://download.pytorch.org/whl/cu121",)
    assert env.channels == ("conda-forge", "https://example.com/private")
    assert any("2 `pip:` blocks" in w and "conda keeps only the last" in w for w in env.warnings)


def test_crlf_and_utf16_bom(tmp_path: Path) -> None:
    crlf = tmp_path / "crlf.yml"
    crlf.write_bytes(BASIC.replace("\n", "\r\n").encode())
    utf16 = tmp_path / "utf16.yml"
    utf16.write_bytes(codecs.BOM_UTF16_LE + BASIC.encode("utf-16-le"))
    expected = envyml.parse(BASIC, "x", platform="linux-64").requested
    assert envyml.read(crlf, platform="linux-64").requested == expected
    assert envyml.read(utf16, platform="linux-64").requested == expected


def test_selectors_follow_the_platform() -> None:
    text = (
        "dependencies:\n  - gxx_linux-64  # [linux]\n  - clang_osx-arm64  # [osx and arm64]\n  - make  # "
        "[unix]\n  - vs2019  # [win]\n"
    )
    linux = envyml.parse(text, "s.yml", platform="linux-64")
    assert specs(linux, "conda") == ["gxx_linux-64", "make"]
    mac = envyml.parse(text, "s.yml", platform="osx-arm64")
    assert specs(mac, "conda") == ["clang_osx-arm64", "make"]
    assert any("selector" in w for w in linux.warnings)


def test_unknown_key_warns_and_python_tuple_tag_is_read() -> None:
    text = "name: x\nfoo: bar\ndependencies: !!python/tuple\n  - python\n"
    env = envyml.parse(text, "t.yml")
    assert specs(env, "conda") == ["python"]
    assert any("unknown top-level key 'foo'" in w for w in env.warnings)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: x\ndependencies:\n  - numpy>>3\n", r"t\.yml:3: invalid conda spec 'numpy>>3'"),
        ("name: x\ndependencies: [a\n", r"t\.yml:\d+: malformed YAML"),
        ("{% set v = 1 %}\nname: x\n", r"t\.yml:1: Jinja template"),
        ("- just\n- a list\n", r"t\.yml:1: expected a mapping"),
        ("dependencies:\n  - conda: [x]\n", r"t\.yml:2: unsupported dependency mapping 'conda'"),
        ("", r"t\.yml: empty file"),
    ],
)
def test_bad_input_is_one_line_with_location(text: str, message: str) -> None:
    with pytest.raises(BadInputError, match=message) as info:
        envyml.parse(text, "t.yml")
    assert "\n" not in str(info.value)


def test_cli_reports_bad_file_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "environment.yml"
    bad.write_text("name: x\ndependencies:\n  - numpy>>3\n")
    assert envguard("snapshot", str(bad)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "environment.yml:3" in err and "Traceback" not in err


def test_development_environment_yml_lists_the_runtime_dependencies() -> None:
    import tomllib

    env = envyml.read(REPO / "environment.yml")
    names = {
        r.spec.split(">")[0].split("=")[0].split("<")[0].strip()
        for r in env.requested
        if r.manager == "conda"
    }
    from packaging.requirements import Requirement

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    python = next(r.spec.split("=")[1] for r in env.requested if r.spec.startswith("python="))
    for dep in map(Requirement, project["dependencies"]):
        if dep.marker is not None and not dep.marker.evaluate({"python_version": python}):
            continue  # e.g. tomli, needed on Python 3.10 only
        assert dep.name.lower() in names, f"environment.yml lacks runtime dependency {dep.name}"


_name = st.from_regex(r"[a-z][a-z0-9_\-]{0,15}", fullmatch=True)
_version = st.from_regex(r"[0-9]{1,2}(\.[0-9]{1,2}){0,2}", fullmatch=True)


@given(st.lists(st.tuples(_name, st.sampled_from(["", "=", ">=", "=="]), _version), min_size=1, max_size=8))
def test_property_every_dependency_round_trips(deps: list[tuple[str, str, str]]) -> None:
    lines = [f"{n}{op}{v}" if op else n for n, op, v in deps]
    text = "name: p\ndependencies:\n" + "".join(f"  - {line}\n" for line in lines)
    env = envyml.parse(text, "p.yml")
    assert specs(env, "conda") == lines


@pytest.mark.parametrize(
    ("count", "message"),
    [
        (1_000_000, "18.9 MB is larger than an environment.yml may be (1024 KiB, 10,000 dependencies)"),
        (20_000, "20,000 dependencies, more than an environment.yml may list (10,000)"),
    ],
)
def test_an_environment_yml_beyond_the_bounds_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], count: int, message: str
) -> None:
    """Issue 28: `lock -f` of a 20 MB environment.yml with a million dependencies was OOM-killed at 8 GiB
    (100k: 40 s and 1.1 GB, then exit 2); now it is refused before anything is built."""
    yml = tmp_path / "environment.yml"
    deps = "".join(f"  - pkg{i}>=1.0\n" for i in range(count))
    yml.write_text(f"name: big\nchannels: [conda-forge]\ndependencies:\n{deps}")
    assert envguard("lock", "-f", str(yml), "-o", str(tmp_path / "out.yml")) == 2
    err = capsys.readouterr().err
    assert err == f"envguard: error: {yml}: {message}; split it or lock it in parts\n"
