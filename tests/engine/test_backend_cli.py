"""The conda/mamba/micromamba CLI backend, tested by replaying what real conda 26.7.1 printed
(../shared/reference/conda-outputs). The conda CLI cannot exist on the test machine, so a minimal fake `conda`
on PATH prints the recorded bytes verbatim for each subcommand (and logs its argv); timeouts and failures too.
"""

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
from envguard.errors import BackendError, UsageError
from envguard.formats.explicit import parse_explicit_text
from envguard.model import Package, VirtualPackage
from envguard.prefix.condaconfig import parse_info
from tests.helpers import envguard

# The fake: replays a recorded file per subcommand; FAKE_CONDA_EXIT / FAKE_CONDA_SLEEP / FAKE_CONDA_STDOUT /
# FAKE_CONDA_STDERR make it fail, hang or print something else.
FAKE = """#!/bin/sh
printf '%s\\n' "$*" >> "$FAKE_CONDA_LOG"
printf 'CONDA_OVERRIDE_CUDA=%s\\n' "${CONDA_OVERRIDE_CUDA-unset}" >> "$FAKE_CONDA_LOG"
[ -n "$FAKE_CONDA_SLEEP" ] && sleep "$FAKE_CONDA_SLEEP"
[ -n "$FAKE_CONDA_STDERR" ] && cat "$FAKE_CONDA_STDERR" >&2
if [ -n "$FAKE_CONDA_STDOUT" ]; then cat "$FAKE_CONDA_STDOUT"; exit "${FAKE_CONDA_EXIT:-0}"; fi
case "$1" in
  --version) cat "$REC/version.txt" ;;
  info) cat "$REC/info.json" ;;
  list) cat "$REC/$FAKE_CONDA_LIST" ;;
  create) cat "$REC/create_small_dryrun.json" ;;
esac
exit "${FAKE_CONDA_EXIT:-0}"
"""


@pytest.fixture
def fake_conda(tmp_path: Path, shared: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "fakebin"
    folder.mkdir()
    exe = folder / "conda"
    exe.write_text(FAKE)
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    log = tmp_path / "conda-argv.log"
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}/usr/bin{os.pathsep}/bin")
    monkeypatch.setenv("REC", str(shared / "reference" / "conda-outputs"))
    monkeypatch.setenv("FAKE_CONDA_LOG", str(log))
    monkeypatch.setenv("FAKE_CONDA_LIST", "list_conda_created-small.json")
    return log


def recorded(shared: Path, name: str) -> str:
    return (shared / "reference" / "conda-outputs" / name).read_text()


def backend() -> CliBackend:
    chosen = select("conda")
    assert isinstance(chosen, CliBackend)
    return chosen


def test_version_and_info_from_recorded_output(fake_conda: Path) -> None:
    conda = backend()
    assert conda.version() == "26.7.1"
    assert conda.describe() == "conda 26.7.1"
    info = conda.info()
    assert info.platform == "linux-64" and info.version == "26.7.1"
    assert info.envs_dirs[1] == "/home/user/.conda/envs"
    assert VirtualPackage("__glibc", "2.36", "0") in info.virtual_packages
    assert "__cuda" not in {v.name for v in info.virtual_packages}


def test_dry_run_solve_parses_link_actions(fake_conda: Path) -> None:
    request = Request(
        ("pytorch", "numpy<2", "zlib"),
        ("file:///srv/channel",),
        "linux-64",
        (VirtualPackage("__glibc", "2.36"),),
    )
    plan = backend().solve(request)
    found = {p.name: (p.version, p.build, p.channel, p.subdir) for p in plan.packages}
    assert found == {
        "cudatoolkit": ("11.8.0", "0", "file:///srv/channel", "noarch"),
        "numpy": ("1.26.4", "0", "file:///srv/channel", "noarch"),
        "python": ("3.11.9", "0", "file:///srv/channel", "noarch"),
        "pytorch": ("2.1.0", "cuda118_0", "file:///srv/channel", "noarch"),
        "zlib": ("1.3.1", "h4ab18f5_1", "file:///srv/channel", "linux-64"),
    }
    argv, override = fake_conda.read_text().splitlines()[:2]
    assert argv.startswith("create --dry-run --yes --prefix ")
    assert argv.endswith("--override-channels --channel file:///srv/channel pytorch numpy<2 zlib --json")
    assert override == "CONDA_OVERRIDE_CUDA="  # exactly what envguard checked: no __cuda


def test_list_parses_both_recordings_like_the_explicit_export(
    fake_conda: Path, shared: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    explicit = parse_explicit_text(recorded(shared, "list_explicit_md5_conda_created-small.txt"))
    expected = {(p.name, p.version, p.build, p.channel) for p in explicit.packages}
    for recording in ("list_conda_created-small.json", "list_rattler.json"):
        monkeypatch.setenv("FAKE_CONDA_LIST", recording)
        packages = backend().list(Path("/home/user/envs/small"))
        assert {(p.name, p.version, p.build, p.channel) for p in packages} == expected
    assert "list --prefix /home/user/envs/small --json" in fake_conda.read_text()


def test_pure_parsers_match_recordings(shared: Path) -> None:
    actions = parse_actions(json.loads(recorded(shared, "create_small_dryrun.json")))
    listed = parse_list(json.loads(recorded(shared, "list_rattler.json")))
    assert [(p.name, p.version, p.build) for p in actions] == [(p.name, p.version, p.build) for p in listed]
    assert parse_info(json.loads(recorded(shared, "info.json"))).pkgs_dirs == ("/home/user/miniconda3/pkgs",)
    with pytest.raises(BackendError):
        parse_list({"not": "a list"})


def test_locked_install_passes_an_explicit_file(fake_conda: Path, tmp_path: Path) -> None:
    lock = parse_explicit_text(recorded_explicit())
    request = Request(platform="linux-64", locked=lock.packages)
    plan = backend().install(tmp_path / "env", request)
    argv = fake_conda.read_text().splitlines()[0]
    assert argv.startswith(f"create --yes --prefix {tmp_path / 'env'} --file ")
    assert [p.name for p in plan.packages] == ["cudatoolkit", "numpy", "python", "pytorch", "zlib"]


def recorded_explicit() -> str:
    from tests.helpers import SHARED

    return (SHARED / "reference" / "conda-outputs" / "list_explicit_sha256_rattler.txt").read_text()


def test_explicit_spec_round_trip(shared: Path) -> None:
    env = parse_explicit_text(recorded(shared, "list_explicit_sha256_rattler.txt"))
    again = parse_explicit_text(explicit_spec(env.packages, "linux-64"))
    assert again.packages == env.packages


def test_conda_json_error_is_one_line_quoting_the_tool(
    fake_conda: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the shape of conda's `--json` errors (CondaError.dump_map): exception_name, message, error, caused_by
    body = {
        "caused_by": "None",
        "exception_name": "PackagesNotFoundError",
        "exception_type": "<class 'conda.exceptions.PackagesNotFoundError'>",
        "message": "The following packages are not available from current channels:\n\n  - nosuchpkg\n\n"
        "Current channels:\n\n  - https://user:secret@conda.example.com/t/tok123/forge\n",
        "error": "PackagesNotFoundError(...)",
    }
    out = tmp_path / "error.json"
    out.write_text(json.dumps(body))
    monkeypatch.setenv("FAKE_CONDA_STDOUT", str(out))
    monkeypatch.setenv("FAKE_CONDA_EXIT", "1")
    with pytest.raises(BackendError) as info:
        backend().solve(Request(("nosuchpkg",), ("conda-forge",), "linux-64"))
    message = str(info.value)
    assert message.startswith("conda create failed (exit 1): PackagesNotFoundError: The following packages")
    assert "nosuchpkg" in message and "\n" not in message
    assert "secret" not in message and "tok123" not in message


def test_plain_stderr_failure(fake_conda: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    err = tmp_path / "stderr.txt"
    err.write_text("Traceback (most recent call last):\n  ...\nCondaValueError: invalid prefix\n")
    monkeypatch.setenv("FAKE_CONDA_STDERR", str(err))
    monkeypatch.setenv("FAKE_CONDA_STDOUT", "/dev/null")
    monkeypatch.setenv("FAKE_CONDA_EXIT", "1")
    with pytest.raises(
        BackendError, match=r"^conda list failed \(exit 1\): .*CondaValueError: invalid prefix$"
    ):
        backend().list(tmp_path)


def test_success_false_and_non_json_output(
    fake_conda: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = tmp_path / "out.json"
    body.write_text(json.dumps({"success": False, "message": "disk full"}))
    monkeypatch.setenv("FAKE_CONDA_STDOUT", str(body))
    with pytest.raises(BackendError, match="conda list failed: disk full"):
        backend().list(tmp_path)
    body.write_text("Collecting package metadata: done\n")
    with pytest.raises(BackendError, match="printed output that is not JSON"):
        backend().list(tmp_path)


def test_timeout_is_a_backend_error(fake_conda: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_CONDA_SLEEP", "5")
    monkeypatch.setenv("ENVGUARD_BACKEND_TIMEOUT", "0.3")
    with pytest.raises(
        BackendError, match=r"conda info did not finish within 0.3 s; raise ENVGUARD_BACKEND_TIMEOUT"
    ):
        backend().info()


def test_failures_through_the_cli_exit_3_with_one_line(
    fake_conda: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FAKE_CONDA_SLEEP", "5")
    monkeypatch.setenv("ENVGUARD_BACKEND_TIMEOUT", "0.3")
    assert envguard("create", "--backend", "conda", "-c", "file:///srv/channel", "zlib", "--dry-run") == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("envguard: error: conda create did not finish")


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


def test_selection_order(fake_conda: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert select().name == "conda"  # auto: conda is on PATH
    monkeypatch.setenv("ENVGUARD_BACKEND", "embedded")
    assert select().name == "embedded"
    assert select("conda").name == "conda"  # --backend beats the variable
    monkeypatch.setenv("ENVGUARD_BACKEND", "pip")
    with pytest.raises(UsageError, match="unknown backend 'pip'"):
        select()


def test_auto_without_tools_is_embedded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert select().name == "embedded"


def test_dry_run_create_through_conda_names_the_recorded_environment(
    fake_conda: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = envguard(
        "create",
        "--backend",
        "conda",
        "-c",
        "file:///srv/channel",
        "pytorch",
        "numpy<2",
        "zlib",
        "--dry-run",
        "--json",
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["schema_version"] == 1 and data["dry_run"] is True
    assert data["name"] == "pytorch2.1-cuda118-py311"
    assert data["backend"] == "conda 26.7.1"
    assert [p["name"] for p in data["packages"]] == ["cudatoolkit", "numpy", "python", "pytorch", "zlib"]


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
