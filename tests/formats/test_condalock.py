"""conda-lock.yml reader: real conda-lock output and real-world locks, every bad-input case as one line + exit
2, and a property test that what envguard writes reads back unchanged."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envguard.errors import BadInputError
from envguard.formats.condalock import read as condalock
from envguard.formats.condalock.write import input_hash, render_lock
from envguard.model import Environment, Fingerprints, Package, PipOrigin, VirtualPackage, make_environment
from envguard.specs import canonical_name
from tests.helpers import envguard

REFERENCE = Path("reference/conda-outputs/conda-lock/conda-lock_no-mamba.yml")
CORPUS = Path("corpus/conda_lock")


def test_reads_conda_locks_own_output(shared: Path) -> None:
    env = condalock.read(shared / REFERENCE, platform="linux-64")
    assert env.kind == "conda-lock" and env.platform == "linux-64" and env.platforms == ("linux-64",)
    assert env.channels == ("file:///srv/channel",)
    assert [p.name for p in env.packages] == ["cudatoolkit", "numpy", "python", "pytorch", "zlib"]
    torch = env.get("pytorch")
    assert torch is not None and torch.build == "cuda118_0" and torch.subdir == "noarch"
    assert torch.md5 == "431a9c48f2e5ea9b068e4a66d66fb063" and len(torch.sha256) == 64
    assert set(torch.depends) == {"cudatoolkit 11.8.*", "numpy", "python >=3.9"}
    assert env.python == "3.11.9" and env.cuda.torch_build == "cuda" and env.cuda.torch_cuda == "11.8"
    assert env.virtual_packages == () and env.fingerprints is None


def test_reads_real_world_multi_platform_locks_with_pip(shared: Path) -> None:
    envs = condalock.read_all(
        shared / CORPUS / "conda__conda-lock__tests_test-install-with-pip-deps_conda-lock.yml"
    )
    assert sorted(envs) == ["linux-64", "linux-aarch64"]
    pip = envs["linux-64"].pip_packages()
    assert len(pip) == 4 and all(
        p.sha256 and p.url.startswith("https://files.pythonhosted.org/") for p in pip
    )
    assert envs["linux-aarch64"].get("_openmp_mutex") is not None


def test_vcs_pip_commit_and_optional_categories(shared: Path) -> None:
    path = shared / CORPUS / "conda__conda-lock__tests_test-v2-to-v3-upgrade_conda-lock-v3.0.3.yml"
    env = condalock.read(path, platform="linux-64")
    requests = env.get("requests", "pip")
    assert requests is not None and requests.origin is not None
    assert (requests.origin.vcs, requests.origin.url) == ("git", "https://github.com/requests/requests.git")
    assert requests.origin.commit_id == "3f07f990ac74f1e1691ba17ef8c14007f05846ab" and requests.sha256 == ""
    assert any("optional (non-main category)" in w for w in env.warnings)


def _cut(text: str, pattern: str, replacement: str = "") -> str:
    changed, count = re.subn(pattern, replacement, text, count=1, flags=re.MULTILINE)
    assert count == 1, pattern
    return changed


BAD_LOCKS = {
    "missing version": (lambda t: _cut(t, r"^version: 1\n"), r"no `version` key"),
    "wrong version": (lambda t: _cut(t, r"^version: 1$", "version: 7"), r"version 7 is not supported"),
    "truncated": (lambda t: t[: len(t) // 2] + "  hash: {md5: 'abc", r":\d+: malformed YAML"),
    "missing field": (lambda t: _cut(t, r"^  url: .*numpy.*\n"), r":\d+: package numpy lacks `url`"),
    "non-hex hash": (
        lambda t: _cut(t, r"md5: 1d874bd57a347f9566a25fc464a96d3f", "md5: not-a-hex-digest-at-all"),
        r"package numpy: md5 'not-a-hex-digest-at-all' is not a hex digest",
    ),
    "no metadata platforms": (
        lambda t: _cut(t, r"^  platforms:\n  - linux-64\n"),
        r"metadata lacks `platforms`",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_LOCKS))
def test_bad_lock_is_one_line_and_exit_2(
    case: str, shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    damage, message = BAD_LOCKS[case]
    lock = tmp_path / "conda-lock.yml"
    lock.write_text(damage((shared / REFERENCE).read_text()))
    assert envguard("diff", str(lock), str(lock), "--platform", "linux-64") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("envguard: error: ") and "Traceback" not in err
    assert re.search(message, err), err
    assert str(lock) in err


def test_missing_platform_names_the_platforms_the_lock_has(
    shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = tmp_path / "conda-lock.yml"
    lock.write_bytes(
        (shared / CORPUS / "conda__conda-lock__tests_test-install-with-pip-deps_conda-lock.yml").read_bytes()
    )
    assert envguard("check", sys.prefix, "--lock", str(lock), "--platform", "osx-arm64") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "no entry for platform osx-arm64; the lock has linux-64, linux-aarch64" in err
    with pytest.raises(BadInputError, match="the lock has linux-64, linux-aarch64"):
        condalock.read(lock, platform="win-64")


# --- property: envguard's writer and reader agree
# ---------------------------------------------------------------

_names = st.from_regex(r"\A[a-z0-9]{1,6}([-_.][a-z0-9]{1,4}){0,2}\Z")  # conda's own rules (CEP 26)
_builds = st.from_regex(r"\A[a-zA-Z0-9_.+]{1,12}\Z")
_versions = st.from_regex(r"\A[0-9]{1,3}(\.[0-9]{1,3}){0,3}([a-z]{1,2}[0-9])?\Z")
_hex = st.text("0123456789abcdef", min_size=32, max_size=32)


@st.composite
def _environments(draw: st.DrawFn) -> Environment:
    names = draw(st.lists(_names, min_size=1, max_size=8, unique=True))
    packages = []
    for name in names:
        version, build, md5 = draw(_versions), draw(_builds), draw(_hex)
        subdir = draw(st.sampled_from(["linux-64", "noarch"]))
        depends = tuple(
            sorted(f"{d} >={draw(_versions)}" for d in draw(st.lists(_names, max_size=3, unique=True)))
        )
        url = f"https://conda.anaconda.org/x/{subdir}/{name}-{version}-{build}.conda"
        packages.append(
            Package(
                "conda",
                name,
                version,
                build,
                channel="x",
                subdir=subdir,
                url=url,
                md5=md5,
                sha256=md5 * 2,
                depends=depends,
            )
        )
    for name in draw(st.lists(_names.map(canonical_name), max_size=3, unique=True)):
        origin = PipOrigin(url=f"file:///src/{name}", editable=True) if draw(st.booleans()) else None
        packages.append(Package("pip", name, draw(_versions), origin=origin))
    fingerprints = Fingerprints(python="3.11.9", numpy_legacy=draw(_hex) * 2) if draw(st.booleans()) else None
    virtual = (VirtualPackage("__glibc", "2.28"), VirtualPackage("__cuda", draw(_versions)))
    return make_environment(
        kind="conda-lock",
        platform="linux-64",
        packages=packages,
        virtual_packages=virtual,
        fingerprints=fingerprints,
        channels=("x",),
    )


def _render(env: Environment) -> str:
    return render_lock(
        {"linux-64": env},
        sources=["environment.yml"],
        content_hashes={"linux-64": "0" * 64},
        source_kind="prefix",
    )


@settings(max_examples=40, deadline=None)
@given(_environments())
def test_render_then_read_round_trips(env: Environment) -> None:
    from envguard.diff.run import diff_environments

    text = _render(env)
    back = condalock.parse(text, "lock.yml")["linux-64"]
    assert back.conda_packages() == env.conda_packages()
    assert [(p.name, p.version, p.origin) for p in back.pip_packages()] == [
        (p.name, p.version, p.origin) for p in env.pip_packages()
    ]
    assert back.virtual_packages == env.virtual_packages and back.fingerprints == env.fingerprints
    assert diff_environments(env, back, engine="fast").equal
    assert _render(back) == text


def test_input_hash_is_stable_and_sensitive() -> None:
    from envguard.formats import envyml

    a = envyml.parse("channels: [conda-forge]\ndependencies:\n  - numpy=1.26\n  - python=3.11\n")
    b = envyml.parse("# reordered\nchannels: [conda-forge]\ndependencies:\n  - python=3.11\n  - numpy=1.26\n")
    c = envyml.parse("channels: [conda-forge]\ndependencies:\n  - python=3.11\n  - numpy=2.0\n")
    assert input_hash(a, "linux-64") == input_hash(b, "linux-64") != input_hash(c, "linux-64")
    assert input_hash(a, "linux-64") != input_hash(a, "osx-arm64")
    assert input_hash(a, "linux-64") != input_hash(a, "linux-64", (VirtualPackage("__cuda", "12.1"),))
