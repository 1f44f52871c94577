"""The conda/mamba/micromamba CLI backend against the real conda 26.7.1 CLI (built by
../shared/tools/conda-kit, fixture `conda`): info, dry-run solves, create from specs / environment.yml /
explicit, list, remove, its errors, timeouts and the CUDA override it passes.

Replays remain only for mamba and micromamba, which cannot be obtained here: a fake `mamba`/`micromamba` on
PATH prints recorded conda 26 JSON (../shared/reference/conda-outputs, the same shapes libmamba prints) for
the cases real conda cannot be made to produce (`success: false`, output that is not JSON)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from envguard.engine.backends import select
from envguard.engine.backends.base import Request, redact
from envguard.engine.backends.cli import (
    CliBackend,
    error_text,
    explicit_spec,
    failure_text,
    parse_actions,
    parse_list,
)
from envguard.engine.backends.embedded import EmbeddedBackend
from envguard.errors import BackendError, BadInputError, UsageError
from envguard.formats.explicit import parse_explicit_text
from envguard.model import Package, VirtualPackage
from envguard.prefix.condaconfig import parse_info
from envguard.prefix.reader import read_prefix
from tests.helpers import MakePrefix, envguard
from tests.realconda import Conda, package_keys

GLIBC = (VirtualPackage("__unix", "0"), VirtualPackage("__linux", "6.1"), VirtualPackage("__glibc", "2.36"))
CUDA = (*GLIBC, VirtualPackage("__cuda", "12.4"))


def conda_backend() -> CliBackend:
    chosen = select("conda")
    assert isinstance(chosen, CliBackend)
    return chosen


def uri(path: Path) -> str:
    return path.resolve().as_uri()


def keys(packages: tuple[Package, ...]) -> set[tuple[str, str, str, str, str]]:
    return {(p.name, p.version, p.build, p.channel, p.subdir) for p in packages}


# --- the real conda ---------------------------------------------------------------------------------------


def test_version_and_info(conda: Conda) -> None:
    backend = conda_backend()
    assert backend.version() == "26.7.1"
    assert backend.describe() == "conda 26.7.1"
    info = backend.info()
    assert info.platform == "linux-64" and info.version == "26.7.1"
    assert info.envs_dirs[0] == str(conda.envs)
    assert info.pkgs_dirs[0] == os.environ["CONDA_PKGS_DIRS"]
    assert {"__unix", "__linux", "__glibc"} <= {v.name for v in info.virtual_packages}


def test_dry_run_solve_is_the_embedded_engines_solve(conda: Conda, channels: dict[str, Path]) -> None:
    request = Request(("python=3.11", "numpy<2", "zlib"), (uri(channels["forge"]),), "linux-64", GLIBC)
    plan = conda_backend().solve(request)
    assert keys(plan.packages) == keys(EmbeddedBackend().solve(request).packages)
    assert {p.name for p in plan.packages} == {"python", "numpy", "zlib"}
    assert not any(conda.envs.iterdir()), "a dry run creates nothing"


def test_the_cuda_envguard_checked_is_what_conda_solves_for(conda: Conda, channels: dict[str, Path]) -> None:
    chans = (uri(channels["pytorch"]), uri(channels["forge"]))
    gpu = conda_backend().solve(Request(("pytorch=2.1=*cuda12.1*",), chans, "linux-64", CUDA))
    assert {p.name: p.build for p in gpu.packages}["pytorch"] == "py3.11_cuda12.1_cudnn8.9.2_0"
    # without __cuda in the request, conda must not see one either (CONDA_OVERRIDE_CUDA="" is passed)
    with pytest.raises(BadInputError, match=r"^conda cannot solve for linux-64: .*__cuda"):
        conda_backend().solve(Request(("pytorch=2.1=*cuda12.1*",), chans, "linux-64", GLIBC))


def test_list_of_a_rattler_prefix_and_a_conda_prefix(
    conda: Conda, make_prefix: MakePrefix, tmp_path: Path
) -> None:
    made = make_prefix(["python=3.11", "numpy=1.26", "six"])
    assert keys(conda_backend().list(made)) == keys(read_prefix(made).packages)
    by_conda = tmp_path / "by-conda"
    conda.run("create", "--yes", "--prefix", str(by_conda), "python=3.11", "numpy=1.26", "six")
    assert (
        keys(conda_backend().list(by_conda))
        == keys(read_prefix(by_conda).packages)
        == keys(read_prefix(made).packages)
    )


def test_install_from_specs_then_remove(conda: Conda, channels: dict[str, Path], tmp_path: Path) -> None:
    prefix = tmp_path / "env"
    request = Request(("python=3.11", "zlib"), (uri(channels["forge"]),), "linux-64", GLIBC)
    plan = conda_backend().install(prefix, request)
    assert {p.name for p in plan.packages} == {"python", "zlib"}
    assert keys(plan.packages) == keys(read_prefix(prefix).packages)
    conda_backend().remove(prefix)
    assert not (prefix / "conda-meta").exists()


def test_locked_install_from_an_explicit_file(conda: Conda, make_prefix: MakePrefix, tmp_path: Path) -> None:
    source = make_prefix(["python=3.11", "numpy=1.26"])
    locked = read_prefix(source).packages
    plan = conda_backend().install(tmp_path / "env", Request(platform="linux-64", locked=locked))
    assert keys(plan.packages) == keys(locked)
    assert package_keys(conda.listed(tmp_path / "env")) == package_keys(conda.listed(source))


def test_create_from_an_environment_yml(
    conda: Conda, channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    yml = tmp_path / "environment.yml"
    yml.write_text(
        f"name: demo\nchannels: [{uri(channels['forge'])}]\ndependencies: [python=3.11, numpy=1.26]\n"
    )
    capsys.readouterr()
    assert envguard("create", "-f", str(yml), "--backend", "conda", "--name", "demo", "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["backend"] == "conda 26.7.1" and data["prefix"] == str(conda.envs / "demo")
    listed = {p["name"] for p in conda.listed(conda.envs / "demo")}
    assert listed == {"python", "numpy", "zlib"}
    envs = conda.json("env", "list")["envs"]
    assert str(conda.envs / "demo") in envs
    assert (tmp_path / "conda-lock.yml").is_file()


def test_unsolvable_specs_are_bad_input_exit_2(
    conda: Conda, channels: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    forge = uri(channels["forge"])
    for specs in (["nosuchpkg"], ["python=3.12", "numpy=2.0", "zlib=1.2.13"]):
        capsys.readouterr()
        code = envguard("create", "--backend", "conda", "-c", forge, *specs, "--dry-run")
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2, err
        assert len(err) == 1 and err[0].startswith("envguard: error: conda cannot solve for linux-64: ")
        assert err[0].endswith("relax the specs or add a channel")
    # the embedded engine says the same with the same exit code
    assert envguard("create", "--backend", "embedded", "-c", forge, "nosuchpkg", "--dry-run") == 2


def test_conda_error_is_one_line_without_credentials(conda: Conda) -> None:
    # offline, conda finds nothing in this channel; its error quotes the URL with the user's password
    channel = "https://user:secret@conda.example.com/t/tok123/forge"
    with pytest.raises(BadInputError) as info:
        conda_backend().solve(Request(("zlib",), (channel,), "linux-64", GLIBC))
    message = str(info.value)
    assert "PackagesNotFoundInChannelsError" in message and "zlib" in message and "\n" not in message
    assert "secret" not in message and "tok123" not in message


def test_a_missing_prefix_is_a_backend_error_quoting_conda(conda: Conda, tmp_path: Path) -> None:
    with pytest.raises(
        BackendError,
        match=r"^conda list failed \(exit 1\): EnvironmentLocationNotFound: "
        r"Not a conda environment: ",
    ):
        conda_backend().list(tmp_path / "nothing")


def test_timeout_is_a_backend_error_and_exit_3(
    conda: Conda, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ENVGUARD_BACKEND_TIMEOUT", "0.05")  # conda's interpreter alone needs longer
    with pytest.raises(
        BackendError, match=r"conda info did not finish within 0.05 s; raise ENVGUARD_BACKEND"
    ):
        conda_backend().info()
    capsys.readouterr()
    assert envguard("create", "--backend", "conda", "-c", "file:///srv/channel", "zlib", "--dry-run") == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("envguard: error: conda create did not finish")


def test_dry_run_create_through_conda_names_the_environment(
    conda: Conda, channels: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    code = envguard(
        "create",
        "--backend",
        "conda",
        "-c",
        uri(channels["pytorch"]),
        "-c",
        uri(channels["forge"]),
        "pytorch=2.1",
        "cpuonly",
        "numpy<2",
        "--dry-run",
        "--json",
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["schema_version"] == 1 and data["dry_run"] is True
    assert data["name"] == "pytorch2.1-cpu-py311"
    assert data["backend"] == "conda 26.7.1"
    assert {"cpuonly", "numpy", "python", "pytorch", "pytorch-mutex", "zlib"} == {
        p["name"] for p in data["packages"]
    }
    assert not any(conda.envs.iterdir())


def test_selection_order(conda: Conda, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{conda.kit.bin}{os.pathsep}/usr/bin{os.pathsep}/bin")
    assert select().name == "conda"  # auto: conda is on PATH
    monkeypatch.setenv("ENVGUARD_BACKEND", "embedded")
    assert select().name == "embedded"
    assert select("conda").name == "conda"  # --backend beats the variable
    monkeypatch.setenv("ENVGUARD_BACKEND", "pip")
    with pytest.raises(UsageError, match="unknown backend 'pip'"):
        select()


# --- mamba / micromamba: replayed (neither can be obtained here) -------------------------------------------

FAKE = """#!/bin/sh
printf '%s\\n' "$*" >> "$FAKE_LOG"
[ -n "$FAKE_STDOUT" ] && cat "$FAKE_STDOUT"
case "$1" in
  --version) cat "$REC/version.txt" ;;
  list) [ -z "$FAKE_STDOUT" ] && cat "$REC/list_rattler.json" ;;
esac
exit "${FAKE_EXIT:-0}"
"""


@pytest.fixture
def fake_mamba(tmp_path: Path, shared: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "fakebin"
    folder.mkdir()
    for tool in ("mamba", "micromamba"):
        exe = folder / tool
        exe.write_text(FAKE)
        exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    log = tmp_path / "argv.log"
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}/usr/bin{os.pathsep}/bin")
    monkeypatch.setenv("REC", str(shared / "reference" / "conda-outputs"))
    monkeypatch.setenv("FAKE_LOG", str(log))
    return log


def test_mamba_success_false_and_non_json_output(
    fake_mamba: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = tmp_path / "out.json"
    body.write_text(json.dumps({"success": False, "message": "disk full"}))
    monkeypatch.setenv("FAKE_STDOUT", str(body))
    with pytest.raises(BackendError, match="mamba list failed: disk full"):
        select("mamba").list(tmp_path)
    body.write_text("Collecting package metadata: done\n")
    with pytest.raises(BackendError, match="printed output that is not JSON"):
        select("micromamba").list(tmp_path)


def test_micromamba_unsolvable_words_are_bad_input(
    fake_mamba: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = tmp_path / "out.txt"
    body.write_text("error    libmamba Could not solve for environment specs\n  - nosuchpkg does not exist\n")
    monkeypatch.setenv("FAKE_STDOUT", str(body))
    monkeypatch.setenv("FAKE_EXIT", "1")
    with pytest.raises(BadInputError, match=r"^micromamba cannot solve for linux-64: .*Could not solve"):
        select("micromamba").solve(Request(("nosuchpkg",), ("file:///srv/channel",), "linux-64"))


def test_auto_prefers_micromamba(fake_mamba: Path) -> None:
    assert select().name == "micromamba"
    assert select().describe() == "micromamba 26.7.1"  # the replayed version line


def test_missing_tool_exit_3(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    for tool in ("conda", "mamba", "micromamba"):
        assert envguard("create", "--backend", tool, "-c", "file:///srv/channel", "zlib") == 3
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [
            f"envguard: error: {tool}: not found on PATH; install it, or use --backend embedded "
            "(no conda needed)"
        ]


def test_auto_without_tools_is_embedded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert select().name == "embedded"


# --- pure parsers, over recorded output ---------------------------------------------------------------------


def recorded(shared: Path, name: str) -> str:
    return (shared / "reference" / "conda-outputs" / name).read_text()


def test_pure_parsers_match_recordings(shared: Path) -> None:
    actions = parse_actions(json.loads(recorded(shared, "create_small_dryrun.json")))
    listed = parse_list(json.loads(recorded(shared, "list_rattler.json")))
    assert [(p.name, p.version, p.build) for p in actions] == [(p.name, p.version, p.build) for p in listed]
    assert parse_info(json.loads(recorded(shared, "info.json"))).pkgs_dirs == ("/home/user/miniconda3/pkgs",)
    with pytest.raises(BackendError):
        parse_list({"not": "a list"})


def test_explicit_spec_round_trip(shared: Path) -> None:
    env = parse_explicit_text(recorded(shared, "list_explicit_sha256_rattler.txt"))
    again = parse_explicit_text(explicit_spec(env.packages, "linux-64"))
    assert again.packages == env.packages


def test_redact_strips_every_url() -> None:
    text = "failed https://u:p@h.example/t/abc/ch/linux-64 and http://x:y@127.0.0.1:8/a"
    assert redact(text) == "failed https://h.example/ch/linux-64 and http://127.0.0.1:8/a"


def test_error_helpers() -> None:
    assert error_text({"exception_name": "X", "message": "X: boom"}) == "X: boom"
    assert failure_text("", "") == "no error message"
    assert failure_text("{}", "a\nb\nc\nd\n") == "b c d"


def test_backend_module_probes_nothing_at_import() -> None:
    import subprocess
    import sys

    code = (
        "import sys, shutil; calls=[]; shutil.which=lambda *a, **k: calls.append(a); "
        "import envguard.engine.backends, envguard.cli.commands.create, envguard.cli.commands.verify; "
        "assert not calls, calls; assert 'rattler' not in sys.modules; print('ok')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.stdout.strip() == "ok", done.stderr


def test_package_fields() -> None:
    (package,) = parse_list(
        [
            {
                "base_url": "https://u:p@conda.example.com/t/tok/forge",
                "build_number": 2,
                "build_string": "h1_2",
                "channel": "forge",
                "name": "zlib",
                "platform": "linux-64",
                "version": "1.3.1",
            }
        ]
    )
    assert package == Package(
        "conda", "zlib", "1.3.1", "h1_2", 2, "https://conda.example.com/forge", "linux-64"
    )
