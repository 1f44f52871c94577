"""Shared fixtures: an isolated HOME/conda config for every test, real local channels, real prefixes."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from tests.channel_server import serve_private
from tests.helpers import (
    SHARED,
    MakePrefix,
    envguard,
    fixture_channel,
    install,
    mounted,
    openssl_keys,
    spec_lock,
)
from tests.realconda import (
    NO_CONDA,
    NO_KIT,
    NO_SHARED,
    REALCONDA,
    Conda,
    CondaKit,
    per_test_condarc,
    real_conda,
)

NEEDS = (NO_CONDA, NO_SHARED, NO_KIT)  # what a fresh clone may lack: one summary line each, not one per test


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> pytest.TestReport:
    """A test skipped for lack of ../shared or conda is reported at tests/realconda.py, so `-ra` folds them
    all into one line per need ("SKIPPED [113] tests/realconda.py: no conda: ...") instead of one per test."""
    report: pytest.TestReport = yield
    if report.skipped and isinstance(report.longrepr, tuple):
        reason = report.longrepr[2].removeprefix("Skipped: ")
        if reason in NEEDS:
            report.longrepr = (str(REALCONDA), None, reason)
    return report


# what makes a test slow: a solve and install, the real conda CLI, a second environment, a training job
HEAVY_FIXTURES = frozenset(
    {
        "channels",
        "isolated_channel",
        "pkgs_cache",
        "make_prefix",
        "attested",
        "conda",
        "conda_kit",
        "pconda",
        "plugin_kit",
        "mismatched_env",
        "numpy1_env",
        "train_script",
        "watch",
        "world",
        "make_world",
        "checkout_copy",
        "git_copy",
    }
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--quick",
        action="store_true",
        help="the inner loop (scripts/test.sh --quick): only tests not marked slow that use none of "
        "tests/conftest.py's HEAVY_FIXTURES",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """--quick: deselect the slow tests (marked, or using a heavy fixture); the rest run in minutes."""
    if not config.getoption("--quick"):
        return
    keep: list[pytest.Item] = []
    slow: list[pytest.Item] = []
    for item in items:
        heavy = HEAVY_FIXTURES.intersection(getattr(item, "fixturenames", ()))
        (slow if heavy or item.get_closest_marker("slow") else keep).append(item)
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = keep


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Point HOME, conda config and every cache at a temp dir so no test touches the developer's machine."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("CONDARC", str(home / ".condarc"))
    monkeypatch.setenv("ENVGUARD_CACHE_DIR", str(home / ".cache" / "envguard"))
    monkeypatch.setenv("CONDA_PKGS_DIRS", str(home / "pkgs"))
    for var in (
        "VIRTUAL_ENV",  # the developer's activated venv would be "the active environment"
        "CONDA_PREFIX",
        "CONDA_DEFAULT_ENV",
        "CONDA_ENVS_PATH",
        "CONDA_ENVS_DIRS",
        "CONDA_ROOT",
        "CONDA_EXE",
        "MAMBA_ROOT_PREFIX",
        "MAMBA_EXE",
        "ENVGUARD_BACKEND",
        "CONDA_OVERRIDE_CUDA",
        "CONDA_OVERRIDE_GLIBC",
    ):
        monkeypatch.delenv(var, raising=False)
    yield home
    from envguard.channels import forget

    forget()  # channel credentials are kept in memory for the process: never carry them to the next test


@pytest.fixture(scope="session")
def channels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Real indexed channels built from fixtures/packages.yaml: forge, pytorch, alt (and `wheels`)."""
    out = tmp_path_factory.mktemp("channels")
    built = fixture_channel.build_channels(out)
    built["wheels"] = out / "wheels"
    return built


@pytest.fixture(scope="session")
def isolated_channel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A channel with a real, isolated python (`python -m venv`'s shape: its sys.prefix is the prefix it is
    installed in) and a real pip (the wheel ensurepip bundles): pip run in such a prefix installs into that
    prefix, never into the test's own venv. Solve it with the `forge` channel (its python needs zlib)."""
    return fixture_channel.build_isolated(tmp_path_factory.mktemp("isolated") / "isolated")


@pytest.fixture
def attested(channels: dict[str, Path], tmp_path: Path) -> tuple[Path, Path, Path]:
    """(lock, public key, attestation): a lock of python, numpy and six that `envguard verify --attest`
    rebuilt and attested, signed with an ed25519 key made by openssl."""
    lock = spec_lock(tmp_path / "project", channels["forge"], "python=3.11", "numpy=1.26", "six")
    private, public = openssl_keys(tmp_path / "keys")
    attestation = tmp_path / "env.intoto.json"
    assert envguard("verify", "--lock", str(lock), "--attest", str(attestation), "--key", str(private)) == 0
    return lock, public, attestation


@pytest.fixture(scope="session")
def pkgs_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("rattler-pkgs")


@pytest.fixture
def make_prefix(tmp_path: Path, channels: dict[str, Path], pkgs_cache: Path) -> MakePrefix:
    """Factory: make_prefix(["python=3.11", "numpy=1.26"], name="env", cuda="12.4") -> installed prefix."""

    def factory(
        specs: Sequence[str],
        *,
        name: str = "env",
        cuda: str | None = None,
        history: bool = True,
        use: Sequence[str] = ("forge", "pytorch"),
    ) -> Path:
        prefix = tmp_path / "envs" / name
        return install(
            prefix, specs, [channels[c] for c in use], cache=pkgs_cache, cuda=cuda, history=history
        )

    return factory


@pytest.fixture(scope="session")
def conda_kit(tmp_path_factory: pytest.TempPathFactory, channels: dict[str, Path]) -> CondaKit:
    """The real conda CLI (../shared/tools/conda-kit, or the conda on PATH), set up once per run, listing the
    fixture channels."""
    urls = [channels[name].resolve().as_uri() for name in ("forge", "pytorch")]
    kit = real_conda(tmp_path_factory.mktemp("conda-kit"), urls)
    if kit is None:
        pytest.skip(NO_CONDA)
    return kit


@pytest.fixture
def conda(conda_kit: CondaKit, isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Conda:
    """The real conda on PATH, sharing HOME, CONDARC and CONDA_PKGS_DIRS with envguard (one
    environments.txt)."""
    condarc, envs = per_test_condarc(conda_kit, tmp_path)
    monkeypatch.setenv("PATH", f"{conda_kit.bin}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("CONDARC", str(condarc))
    monkeypatch.setenv("ENVGUARD_CONDA_HOME", str(isolated_home))
    return Conda(conda_kit, isolated_home, condarc, envs)


@pytest.fixture
def shared() -> Path:
    """../shared beside the repo (recorded conda outputs, reference files); tests that need it skip cleanly
    when it is absent."""
    if not SHARED.is_dir():
        pytest.skip(NO_SHARED)
    return SHARED


@pytest.fixture
def tiny_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A real 1 MiB tmpfs (needs root or CAP_SYS_ADMIN; skipped elsewhere)."""
    with mounted(["-t", "tmpfs", "-o", "size=1m", "tmpfs"], tmp_path / "shm") as mount:
        yield mount


@pytest.fixture
def tiny_shm(tiny_tmpfs: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tiny_tmpfs as the shared-memory mount envguard reads."""
    monkeypatch.setenv("ENVGUARD_SHM_PATH", str(tiny_tmpfs))
    return tiny_tmpfs


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 2 MiB tmpfs (a full disk after 2 MiB of writes; needs root, skipped elsewhere)."""
    with mounted(["-t", "tmpfs", "-o", "size=2m", "tmpfs"], tmp_path / "tiny-disk") as mount:
        yield mount


@pytest.fixture(scope="session")
def mismatched_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real venv holding this interpreter's CPU torch (its real dist-info, importable through a .pth file)
    and PyPI's CUDA torchvision 0.29.1 wheel from local disk, which fails to import beside it."""
    import shutil
    import sys
    import sysconfig

    env = tmp_path_factory.mktemp("family") / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    site = next((env / "lib").glob("python3*/site-packages"))
    installed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            str(site),
            "torchvision==0.29.1",
        ],
        capture_output=True,
        text=True,
    )
    if installed.returncode != 0:
        pytest.skip(f"torchvision 0.29.1 cannot be installed here: {installed.stderr.strip()[-200:]}")
    purelib = Path(sysconfig.get_paths()["purelib"])
    # the dist-info carries the wheel's version: 2.13.0+cpu for the CPU wheel, 2.13.0 for the CUDA one (whose
    # torch.__version__ still says +cu130)
    (dist,) = purelib.glob(f"torch-{importlib.metadata.version('torch')}.dist-info")
    shutil.copytree(dist, site / dist.name)  # torch's own metadata: what pip would have recorded
    (site / "zz_envguard_base.pth").write_text(f"{purelib}\n")
    return env


PIPX_NOT_COPIED = ("*.egg-info", ".*_cache", ".git", ".venv", "__pycache__", "build", "dist")


@pytest.fixture(scope="session")
def pipx_envguard(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the `envguard` command pipx put in its bin folder, its venv): `pipx install` of a copy of this working
    tree, as the README advises users to install it (skipped where pipx cannot install it offline)."""
    pipx = Path(sys.executable).parent / "pipx"
    if not pipx.exists():
        pytest.skip("pipx is not installed next to this interpreter")
    root = tmp_path_factory.mktemp("pipx")
    source = root / "envguard"
    shutil.copytree(Path(__file__).parent.parent, source, ignore=shutil.ignore_patterns(*PIPX_NOT_COPIED))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX")}
    env.update(PIPX_HOME=str(root / "home"), PIPX_BIN_DIR=str(root / "bin"), PIP_CACHE_DIR=str(root / "pip"))
    argv = [str(pipx), "install", str(source)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False, timeout=900)
    if done.returncode != 0:
        pytest.skip(f"pipx install of the checkout failed here (offline?): {done.stderr[-500:]}")
    return root / "bin" / "envguard", root / "home" / "venvs" / "conda-envguard"


@pytest.fixture(scope="session")
def token_channel(channels: dict[str, Path]) -> Iterator[tuple[str, list[str]]]:
    """The fixture channels served over HTTP on 127.0.0.1 behind a token in the path, as anaconda.org's
    `/t/<TOKEN>/` (tests.channel_server.PRIVATE_TOKEN; anything else is 404): (the base URL with the token,
    every path served)."""
    served: list[str] = []
    with serve_private(channels["forge"].parent, "token", served) as base:
        yield base, served


@pytest.fixture(scope="session")
def second_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """(index URL, its wheel folder): real pypiserver on 127.0.0.1 holding `torchish 2.13.0+cpu` (a
    local-version wheel, as PyTorch's CPU index serves torch) and `helperish 1.0`, built with setuptools."""
    from tests.pipindex import LOCAL_VERSION, build_wheel, pypiserver

    root = tmp_path_factory.mktemp("second-index")
    packages = root / "packages"
    build_wheel(root / "src", "torchish", LOCAL_VERSION, packages)
    build_wheel(root / "src", "helperish", "1.0", packages)
    with pypiserver(packages) as url:
        yield url, packages
