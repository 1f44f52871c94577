"""`envguard export` against what conda itself wrote for the same environment
(../shared/reference/conda-outputs), plus parse-back, solve and install round trips with rattler on the
fixture channels."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from envguard.channels import strip_credentials
from envguard.depgraph import install_order, leaves
from envguard.engine.solver import solve
from envguard.errors import UsageError
from envguard.export.run import export, to_environment_yml, to_explicit
from envguard.formats import envyml
from envguard.formats.explicit import parse_explicit_text
from envguard.machine.platform import default_virtual_packages
from envguard.model import Package, make_environment
from envguard.prefix.reader import read_prefix
from envguard.specs import parse_conda
from tests.helpers import envguard, fixture_channel, install

REF = "reference/conda-outputs"
SRV = "file:///srv/channel"


@pytest.fixture(scope="module")
def small_channel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The channel conda's reference outputs were recorded against, rebuilt as real packages."""
    from fixture_channel import Recipe

    root = tmp_path_factory.mktemp("reference") / "srv" / "channel"
    noarch: dict[str, Any] = {"subdir": "noarch", "noarch": "generic"}
    recipes = [
        Recipe("python", "3.11.9", "0", **noarch),
        Recipe("numpy", "1.26.4", "0", depends=["python"], **noarch),
        Recipe("numpy", "2.0.1", "0", depends=["python"], **noarch),
        Recipe("cudatoolkit", "11.8.0", "0", **noarch),
        Recipe("pytorch", "2.1.0", "cuda118_0", depends=["python", "numpy", "cudatoolkit"], **noarch),
        Recipe("zlib", "1.3.1", "h4ab18f5_1", build_number=1, depends=["__glibc >=2.17"]),
    ]
    for recipe in recipes:
        fixture_channel.build_package(recipe, root)
    fixture_channel.index(root)
    return root


def _small_env(where: Path, channel: Path, cache: Path, *, history: str | None) -> Path:
    """`pytorch numpy<2 zlib` installed by rattler; `history` is conda's recorded history (None: empty
    file)."""
    prefix = install(where, ["pytorch", "numpy<2", "zlib"], [channel], cache=cache, history=False)
    text = "" if history is None else history.replace(SRV, channel.as_uri())
    (prefix / "conda-meta" / "history").write_text(text)
    return prefix


@pytest.fixture
def rattler_small(tmp_path: Path, small_channel: Path, pkgs_cache: Path) -> Path:
    return _small_env(tmp_path / "envs" / "small", small_channel, pkgs_cache, history=None)


@pytest.fixture
def conda_small(tmp_path: Path, small_channel: Path, pkgs_cache: Path, shared: Path) -> Path:
    history = (shared / REF / "conda_meta_history_created-small.txt").read_text()
    return _small_env(tmp_path / "envs" / "created-small", small_channel, pkgs_cache, history=history)


def _body(text: str, channel: Path) -> list[str]:
    """Lines without comments, `name:` and `prefix:`, with our channel URL written as conda's."""
    out = text.replace(channel.as_uri(), SRV).splitlines()
    return [ln for ln in out if not ln.startswith(("#", "name:", "prefix:"))]


def _deps(text: str) -> list[str]:
    import yaml

    data = yaml.safe_load(text)
    return [d for d in data["dependencies"] if isinstance(d, str)]


# --- against conda's own output
# -------------------------------------------------------------------------------


def test_full_equals_conda_env_export(rattler_small: Path, small_channel: Path, shared: Path) -> None:
    ours = to_environment_yml(read_prefix(rattler_small), "full")
    conda = (shared / REF / "env_export_rattler.yml").read_text()
    assert _body(ours.text, small_channel) == _body(conda, small_channel)
    assert ours.warnings == ()
    assert "prefix:" not in ours.text and str(rattler_small) not in ours.text


def test_pinned_is_conda_no_builds_for_what_was_asked(
    conda_small: Path, small_channel: Path, shared: Path
) -> None:
    env = read_prefix(conda_small)
    ours = _deps(to_environment_yml(env, "pinned").text)
    asked = {r.spec.split("[")[0] for r in env.requested} | {"python"}
    no_builds = _deps((shared / REF / "env_export_nobuilds_rattler.yml").read_text())
    assert ours == [line for line in no_builds if line.split("=")[0] in asked]
    assert ours == ["numpy=1.26.4", "python=3.11.9", "pytorch=2.1.0", "zlib=1.3.1"]


def test_from_history_equals_conda_from_history(conda_small: Path, shared: Path) -> None:
    ours = to_environment_yml(read_prefix(conda_small), "from-history")
    conda = _deps((shared / REF / "env_export_fromhistory_conda_created-small.yml").read_text())
    assert sorted(_deps(ours.text)) == sorted(conda)
    assert "channels:" in ours.text, "unlike conda --from-history, the channels are kept"


def test_rattler_env_without_history_pins_its_leaves(rattler_small: Path) -> None:
    result = to_environment_yml(read_prefix(rattler_small), "pinned")
    assert _deps(result.text) == [
        "python=3.11.9",
        "pytorch=2.1.0=*cuda118*",
        "zlib=1.3.1",
    ]  # the CUDA choice kept
    assert any("top-level package" in w for w in result.warnings)


def _archive(url: str) -> Path:
    return Path(unquote(urlsplit(url).path))


def test_explicit_has_conda_list_explicit_sha256_shape(
    rattler_small: Path, small_channel: Path, shared: Path
) -> None:
    ours = to_explicit(read_prefix(rattler_small)).text.replace(small_channel.as_uri(), SRV).splitlines()
    conda = (shared / REF / "list_explicit_sha256_rattler.txt").read_text().splitlines()
    assert ours[:3] == conda[:3] and ours[4] == conda[4] == "@EXPLICIT"
    assert ours[3].startswith("# created-by: envguard ") and conda[3].startswith("# created-by: conda ")
    assert [ln.split("#")[0] for ln in ours[5:]] == [ln.split("#")[0] for ln in conda[5:]], (
        "conda's install order"
    )
    for line in ours[5:]:
        url, digest = line.split("#")
        real = _archive(url.replace(SRV, small_channel.as_uri()))
        assert digest == hashlib.sha256(real.read_bytes()).hexdigest()


def test_explicit_falls_back_to_md5_then_to_no_hash(
    rattler_small: Path, small_channel: Path, shared: Path
) -> None:
    for record_path in (rattler_small / "conda-meta").glob("*.json"):
        record = json.loads(record_path.read_text())
        record.pop("sha256")
        if record["name"] == "zlib":
            record.pop("md5")
        record_path.write_text(json.dumps(record))
    result = to_explicit(read_prefix(rattler_small))
    ours = result.text.replace(small_channel.as_uri(), SRV).splitlines()
    md5 = (shared / REF / "list_explicit_md5_rattler.txt").read_text().splitlines()
    bare = (shared / REF / "export_explicit_rattler.txt").read_text().splitlines()
    assert ours[5] == "file:///srv/channel/linux-64/zlib-1.3.1-h4ab18f5_1.conda" and ours[5] in bare
    assert [ln.split("#")[0] for ln in ours[5:]] == [ln.split("#")[0] for ln in md5[5:]]
    for line in ours[6:]:
        url, digest = line.split("#")
        assert (
            digest == hashlib.md5(_archive(url.replace(SRV, small_channel.as_uri())).read_bytes()).hexdigest()
        )
    assert result.warnings == ("zlib 1.3.1: no md5 or sha256 recorded; written without a hash",)


# --- round trips on the fixture channels --------------------------------------------------------------------


@pytest.fixture
def cuda_env(make_prefix: Any, channels: dict[str, Path]) -> Path:
    from tests.helpers import pip_install

    prefix: Path = make_prefix(["python=3.11", "numpy=1.26", "pytorch=2.1=*cuda11.8*", "pip"], cuda="12.4")
    pip_install(prefix, "--find-links", str(channels["wheels"]), "tinyproj==1.0.0")
    return prefix


def _prefix_records(prefix: Path) -> dict[str, Any]:
    import rattler

    records = (rattler.PrefixRecord.from_path(p) for p in (prefix / "conda-meta").glob("*.json"))
    return {r.name.normalized: r for r in records}


@pytest.mark.parametrize("mode", ["pinned", "full", "from-history"])
def test_exported_file_parses_back_and_matches_the_prefix(cuda_env: Path, mode: str) -> None:
    import rattler

    from envguard.specs import pip_matches

    env = read_prefix(cuda_env)
    text = export(env, mode).text  # type: ignore[arg-type]
    parsed = envyml.parse(text, "exported.yml")
    assert parsed.channels == env.channels and parsed.name == "env"
    records = _prefix_records(cuda_env)
    conda = [r.spec for r in parsed.requested if r.manager == "conda"]
    assert conda, text
    for spec in conda:
        match = rattler.MatchSpec(spec, strict=False)
        assert match.matches(records[match.name.normalized]), spec
    pip = [r.spec for r in parsed.requested if r.manager == "pip"]
    assert pip == (["tinyproj"] if mode == "from-history" else ["tinyproj==1.0.0"])
    assert pip_matches(pip[0], env.get("tinyproj", "pip")) is True  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["pinned", "full"])
def test_exported_specs_solve_to_the_installed_versions(cuda_env: Path, mode: str) -> None:
    env = read_prefix(cuda_env)
    parsed = envyml.parse(export(env, mode).text, "exported.yml")  # type: ignore[arg-type]
    specs = [r.spec for r in parsed.requested if r.manager == "conda"]
    solved = solve(specs, parsed.channels, "linux-64", default_virtual_packages("linux-64", "12.4"))
    got = {p.name: (p.version, p.build) for p in solved.packages}
    installed = {p.name: (p.version, p.build) for p in env.conda_packages()}
    if mode == "full":
        assert got == installed
    else:
        assert {n: v for n, (v, _b) in got.items()} == {n: v for n, (v, _b) in installed.items()}
        assert got["pytorch"] == installed["pytorch"], "the user's *cuda11.8* build request is kept"
        builds = {parse_conda(s).name: parse_conda(s).build for s in specs}
        assert builds == {"numpy": None, "pip": None, "python": None, "pytorch": "*cuda11.8*"}, (
            "portable: no builds"
        )


def test_explicit_installs_without_solving(cuda_env: Path, channels: dict[str, Path], tmp_path: Path) -> None:
    """What `conda create --file spec.txt` does: fetch exactly these URLs, check hashes, link them."""
    import rattler

    env = read_prefix(cuda_env)
    result = to_explicit(env)
    assert result.warnings == (
        "1 pip package(s) cannot be written to an explicit spec and were left out: tinyproj",
    )
    spec = parse_explicit_text(result.text, "spec.txt")
    wanted = {p.url: p for p in spec.packages}
    records = []
    for name in ("forge", "pytorch"):
        channel = rattler.Channel(channels[name].resolve().as_uri())
        for subdir in ("linux-64", "noarch"):
            repodata = rattler.RepoData.from_path(channels[name] / subdir / "repodata.json")
            records += [r for r in repodata.into_repo_data(channel) if str(r.url) in wanted]
    assert len(records) == len(wanted) == len(env.conda_packages())
    for record in records:
        assert (
            wanted[str(record.url)].sha256
            == hashlib.sha256(_archive(str(record.url)).read_bytes()).hexdigest()
        )
    target = tmp_path / "from-explicit"
    asyncio.run(rattler.install(records, target, cache_dir=tmp_path / "cache", show_progress=False))
    rebuilt = read_prefix(target)
    assert [(p.name, p.version, p.build) for p in rebuilt.conda_packages()] == [
        (p.name, p.version, p.build) for p in env.conda_packages()
    ]


# --- pip lines, options and errors
# ---------------------------------------------------------------------------


def test_cli_writes_file_atomically_and_prints_warnings(
    rattler_small: Path, tmp_path: Path, capsys: Any
) -> None:
    out = tmp_path / "out" / "environment.yml"
    assert envguard("export", str(rattler_small), "-o", str(out)) == 0
    assert out.read_text().startswith("# This file may be used to create an environment using:")
    assert "top-level package" in capsys.readouterr().err
    assert not list(out.parent.glob(".*tmp"))
    assert envguard("export", str(rattler_small), "--format", "explicit", "--from-history") == 2
    assert "does not apply to --format explicit" in capsys.readouterr().err
    assert envguard("export", str(rattler_small), "--format", "explicit", "--full") == 0
    assert "@EXPLICIT" in capsys.readouterr().out


def test_environment_yml_source(tmp_path: Path, capsys: Any) -> None:
    source = tmp_path / "environment.yml"
    source.write_text(
        "name: demo\nchannels:\n  - https://u:pw@conda.example.org/t/tk-1/forge\ndependencies:\n  - "
        "numpy>=1.21\n"
        "  - pip\n  - pip:\n    - --extra-index-url https://u:pw@pypi.example.org/simple\n    - "
        "requests==2.31.0\n"
    )
    assert envguard("export", str(source)) == 0
    captured = capsys.readouterr()
    assert "nothing is installed to pin" in captured.err
    assert (
        _deps(captured.out) == ["numpy>=1.21", "pip"]
        and "pw" not in captured.out
        and "tk-1" not in captured.out
    )
    assert "--extra-index-url https://pypi.example.org/simple" in captured.out
    with pytest.raises(UsageError, match="needs resolved packages"):
        to_explicit(envyml.read(source))
    assert envguard("export", str(source), "--full") == 2


# --- properties
# ----------------------------------------------------------------------------------------------

_names = st.lists(
    st.from_regex(r"[a-z][a-z0-9_-]{0,10}", fullmatch=True), min_size=1, max_size=8, unique=True
)


@st.composite
def _graphs(draw: st.DrawFn) -> list[Package]:
    """Installed packages whose depends only point at packages earlier in a hidden order (acyclic)."""
    names = draw(_names)
    packages = []
    for index, name in enumerate(names):
        deps = draw(st.lists(st.sampled_from(names[:index]), unique=True)) if index else []
        packages.append(Package("conda", name, "1.0", "0", depends=tuple(f"{d} >=1" for d in deps)))
    return draw(st.permutations(packages))


@given(_graphs())
def test_property_install_order_puts_dependencies_first(packages: list[Package]) -> None:
    order = [p.name for p in install_order(packages)]
    assert sorted(order) == sorted(p.name for p in packages)
    for package in packages:
        for dep in package.depends:
            assert order.index(dep.split()[0]) < order.index(package.name)
    assert {p.name for p in leaves(packages)} == {p.name for p in packages} - {
        d.split()[0] for p in packages for d in p.depends
    }


_version = st.from_regex(r"[0-9]{1,3}(\.[0-9a-z]{1,4}){0,3}", fullmatch=True)
_build = st.from_regex(r"[a-z0-9_]{1,12}", fullmatch=True)


@given(_names, st.data())
def test_property_full_export_parses_back(names: list[str], data: st.DataObject) -> None:
    import yaml

    conda = [Package("conda", n, data.draw(_version), data.draw(_build)) for n in names]
    pip = [Package("pip", f"py-{n}", data.draw(_version)) for n in names[:2]]
    channel = data.draw(
        st.sampled_from(["conda-forge", "https://USER:SECRET@example.org/t/TOKEN-9/ch", "file:///a b/c"])
    )
    env = make_environment(
        kind="prefix", name=data.draw(st.text(max_size=12)), channels=(channel,), packages=conda + pip
    )
    text = to_environment_yml(env, "full").text
    loaded = yaml.safe_load(text)
    assert [d for d in loaded["dependencies"] if isinstance(d, str)] == sorted(
        [f"{p.name}={p.version}={p.build}" for p in conda],  # no `pip` unless it is a conda package here
        key=lambda s: s.split("=")[0],
    )
    assert loaded["dependencies"][-1] == {
        "pip": [f"{p.name}=={p.version}" for p in sorted(pip, key=lambda p: p.name)]
    }
    assert loaded["channels"] == [strip_credentials(channel)] and "SECRET" not in text and "TOKEN" not in text
    assert loaded.get("name", "") in (env.name or "", None)
