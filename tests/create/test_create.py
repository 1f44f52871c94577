"""`envguard create` end to end on real local channels with the embedded engine (no conda on this machine)."""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from envguard.check.report import check_environment
from envguard.formats.condalock.read import read as read_lock
from envguard.prefix.reader import read_prefix
from tests.helpers import envguard

TORCH_CUDA = ["python=3.11", "pytorch=2.1=*cuda11.8*", "numpy"]


def environment_yml(
    folder: Path,
    channels: dict[str, Path],
    deps: list[str],
    *,
    name: str = "scratch",
    use: tuple[str, ...] = ("pytorch", "forge"),
    extra: str = "",
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        f"name: {name}",
        "channels:",
        *[f"  - {channels[c].resolve().as_uri()}" for c in use],
        "dependencies:",
    ]
    lines += [f"  - {d}" for d in deps]
    path = folder / "environment.yml"
    path.write_text("\n".join(lines) + "\n" + extra)
    return path


def envs(home: Path) -> Path:
    return home / ".conda" / "envs"


def test_done_criterion_cuda_env_is_named_registered_conda_compatible_and_locked(
    channels: dict[str, Path],
    tmp_path: Path,
    isolated_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    yml = environment_yml(tmp_path / "project", channels, TORCH_CUDA)
    # no driver: refused with a message that says so, nothing created
    assert envguard("create", "-f", str(yml)) == 2
    err = capsys.readouterr().err
    assert "asks for a CUDA build (pytorch=2.1=*cuda11.8*) but this machine has no NVIDIA driver" in err
    assert not envs(isolated_home).exists()
    # a driver (simulated the way conda does it)
    monkeypatch.setenv("CONDA_OVERRIDE_CUDA", "12.4")
    assert envguard("create", "-f", str(yml)) == 0
    out, err = capsys.readouterr()
    prefix = envs(isolated_home) / "pytorch2.1-cuda118-py311"
    assert (
        f"Created pytorch2.1-cuda118-py311[/bold] at {prefix}" in out
        or "Created pytorch2.1-cuda118-py311" in out
    )
    assert "names the environment 'scratch'" in err
    assert (isolated_home / ".conda" / "environments.txt").read_text().splitlines() == [str(prefix)]
    live = read_prefix(prefix)
    assert live.cuda.torch_build == "cuda" and live.cuda.toolkit == "11.8"
    assert {r.spec for r in live.requested} == set(TORCH_CUDA)
    assert (
        "# update specs: ['python=3.11', 'pytorch=2.1=*cuda11.8*', 'numpy']"
        in (prefix / "conda-meta" / "history").read_text()
    )
    lock = yml.parent / "conda-lock.yml"
    assert check_environment(live, read_lock(lock, "linux-64")).clean
    assert envguard("name", str(yml)) == 0
    assert capsys.readouterr().out == "pytorch2.1-cuda118-py311\n"
    assert envguard("name", str(prefix)) == 0
    assert capsys.readouterr().out == "pytorch2.1-cuda118-py311\n"
    assert (
        envguard("export", str(prefix), "--from-history") == 0
    )  # the requests, as conda's history keeps them
    exported = capsys.readouterr().out
    assert all(f"  - {spec}\n" in exported for spec in TORCH_CUDA)


def test_cpu_build_chosen_on_a_gpu_machine_warns(
    channels: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("CONDA_OVERRIDE_CUDA", "12.4")
    yml = environment_yml(tmp_path, channels, ["python=3.11", "pytorch=2.1", "pytorch-cuda=11.8"])
    assert envguard("create", "-f", str(yml), "--dry-run", "--json") == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["name"] == "pytorch2.1-cpu-py311"
    assert "chose a CPU build (pytorch 2.1.0 py3.11_cpu_0" in err and "conda#14761" in err


@pytest.mark.parametrize(
    ("deps", "cuda", "expected"),
    [
        (["python=3.12", "pytorch=2.3"], None, "pytorch2.3-cpu-py312"),
        (["python=3.10", "tensorflow=2.12"], "12.4", "tf2.12-gpu-py310"),
        (["python=3.11", "jax=0.4", "jaxlib=*=cuda*"], "12.4", "jax0.4-cuda12-py311"),
    ],
)
def test_semantic_names_of_real_solves(
    channels: dict[str, Path],
    tmp_path: Path,
    isolated_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    deps: list[str],
    cuda: str | None,
    expected: str,
) -> None:
    if cuda:
        monkeypatch.setenv("CONDA_OVERRIDE_CUDA", cuda)
    yml = environment_yml(tmp_path, channels, deps)
    assert envguard("create", "-f", str(yml), "--no-lock") == 0
    assert (envs(isolated_home) / expected / "conda-meta").is_dir()
    capsys.readouterr()
    assert envguard("name", str(yml)) == 0
    assert capsys.readouterr().out.strip() == expected


def test_fallback_name_agrees_between_file_and_created_env(
    channels: dict[str, Path], tmp_path: Path, isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    yml = environment_yml(tmp_path, channels, ["python=3.11", "six"], use=("forge",))
    assert envguard("name", "--no-solve", str(yml)) == 0
    name = capsys.readouterr().out.strip()
    assert re.fullmatch(r"py311-[0-9a-f]{6}", name)
    assert envguard("create", "-f", str(yml)) == 0
    capsys.readouterr()
    assert envguard("name", str(envs(isolated_home) / name)) == 0
    assert capsys.readouterr().out.strip() == name


def test_collision_refused_with_suggestion_then_force(
    channels: dict[str, Path], tmp_path: Path, isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["create", "-c", channels["forge"].resolve().as_uri(), "python=3.11", "zlib", "--name", "work"]
    assert envguard(*args) == 0
    marker = envs(isolated_home) / "work" / "marker.txt"
    marker.write_text("old")
    capsys.readouterr()
    assert envguard(*args) == 2
    err = capsys.readouterr().err
    assert "an environment named 'work' already exists" in err and "--name work-2" in err and "--force" in err
    assert marker.exists()
    assert envguard(*args, "--force") == 0
    assert not marker.exists() and (envs(isolated_home) / "work" / "conda-meta").is_dir()
    assert "Replaced work" in capsys.readouterr().out


@pytest.mark.parametrize("bad", ["../x", "-rf", "a/b", "x" * 65, "base"])
def test_bad_names_are_refused_before_anything_happens(
    channels: dict[str, Path], isolated_home: Path, bad: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert envguard("create", "-c", channels["forge"].resolve().as_uri(), "zlib", f"--name={bad}") == 2
    assert "environment name" in capsys.readouterr().err
    assert not (isolated_home / ".conda").exists()


def test_prefix_and_envs_path(
    channels: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    forge = channels["forge"].resolve().as_uri()
    assert envguard("create", "-c", forge, "zlib", "--prefix", str(tmp_path / "here")) == 0
    assert (tmp_path / "here" / "conda-meta").is_dir()
    monkeypatch.setenv("CONDA_ENVS_PATH", str(tmp_path / "shared-envs"))
    assert envguard("create", "-c", forge, "python=3.11", "zlib") == 0
    (created,) = (tmp_path / "shared-envs").iterdir()
    assert created.name.startswith("py311-")
    assert envguard("create", "-c", forge, "zlib", "--name", "x", "--prefix", str(tmp_path / "y")) == 2


def test_condarc_envs_dirs(channels: dict[str, Path], tmp_path: Path, isolated_home: Path) -> None:
    (isolated_home / ".condarc").write_text(f"envs_dirs:\n  - {tmp_path / 'rc-envs'}\n")
    assert envguard("create", "-c", channels["forge"].resolve().as_uri(), "zlib", "-n", "small") == 0
    assert (tmp_path / "rc-envs" / "small" / "conda-meta").is_dir()


def test_jupyter_kernelspec(
    channels: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "jupyter"))
    forge = channels["forge"].resolve().as_uri()
    assert envguard("create", "-c", forge, "python=3.11", "ipykernel", "-n", "Nb.Env", "--jupyter") == 0
    assert "ipykernel is not installed" not in capsys.readouterr().err
    spec = json.loads((tmp_path / "jupyter" / "kernels" / "nb.env" / "kernel.json").read_text())
    python = Path(spec["argv"][0])
    assert python.name == "python" and python.parent.parent.name == "Nb.Env"
    assert spec["argv"][1:] == ["-m", "ipykernel_launcher", "-f", "{connection_file}"]
    assert spec["display_name"] == "Python (Nb.Env)" and spec["language"] == "python"
    assert envguard("create", "-c", forge, "python=3.11", "-n", "nokernel", "--jupyter") == 0
    assert "ipykernel is not installed in nokernel" in capsys.readouterr().err


def test_create_from_lock_reproduces_the_packages(
    channels: dict[str, Path], tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONDA_OVERRIDE_CUDA", "12.4")
    yml = environment_yml(tmp_path, channels, TORCH_CUDA)
    assert envguard("create", "-f", str(yml), "-n", "first") == 0
    assert envguard("create", "--lock", str(tmp_path / "conda-lock.yml"), "-n", "second") == 0
    first, second = (read_prefix(envs(isolated_home) / n) for n in ("first", "second"))
    assert [(p.name, p.version, p.build, p.sha256) for p in first.packages] == [
        (p.name, p.version, p.build, p.sha256) for p in second.packages
    ]


def test_lock_needing_newer_glibc_is_refused(
    channels: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    yml = environment_yml(tmp_path, channels, ["python=3.11", "zlib"], use=("forge",))
    assert envguard("create", "-f", str(yml), "-n", "ok") == 0
    monkeypatch.setenv("CONDA_OVERRIDE_GLIBC", "2.12")
    capsys.readouterr()
    assert envguard("create", "--lock", str(tmp_path / "conda-lock.yml"), "-n", "old-glibc") == 2
    err = capsys.readouterr().err
    assert "zlib 1.3.1 h4ab18f5_1" in err and "needs __glibc >=2.17" in err and "__glibc 2.12" in err


def test_pip_section_is_installed(channels: dict[str, Path], tmp_path: Path, isolated_home: Path) -> None:
    wheels = channels["wheels"]
    extra = f"  - pip:\n    - --no-index\n    - --find-links {wheels}\n    - tinyproj==1.0.0\n"
    yml = environment_yml(tmp_path, channels, ["python=3.11", "pip"], use=("forge",), extra=extra)
    assert envguard("create", "-f", str(yml), "-n", "withpip") == 0
    env = read_prefix(envs(isolated_home) / "withpip")
    assert ("tinyproj", "1.0.0") in [(p.name, p.version) for p in env.pip_packages()]


def test_dry_run_installs_nothing(
    channels: dict[str, Path], isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        envguard("create", "-c", channels["forge"].resolve().as_uri(), "python=3.11", "zlib", "--dry-run")
        == 0
    )
    assert "Would create py311-" in capsys.readouterr().out
    assert not (isolated_home / ".conda").exists()


def test_channel_token_never_appears(
    channels: dict[str, Path], tmp_path: Path, isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.channel_server import leaks, serve

    yml = environment_yml(tmp_path, channels, ["python=3.11", "zlib"], use=())
    with serve(channels["forge"].parent) as base:
        code = envguard("create", "-f", str(yml), "-c", f"{base}/forge", "-n", "private", "--json")
        out, err = capsys.readouterr()
        assert code == 0, err
    assert leaks(out, err, folders=(isolated_home / ".conda", tmp_path)) == []
    assert json.loads(out)["channels"][0].startswith("http://127.0.0.1:")


def test_usage_errors(channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert envguard("create") == 2
    assert "exactly one" in capsys.readouterr().err
    assert envguard("create", "-f", str(tmp_path / "missing.yml")) == 2
    assert envguard("create", "not a spec ][") == 2
    capsys.readouterr()
    assert envguard("create", "zlib") == 2  # no channels: say -c, not "the environment.yml" there is none of
    assert "pass -c CHANNEL" in capsys.readouterr().err


def test_unreachable_private_channel_is_exit_3_without_the_token(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.channel_server import SECRET, TOKEN

    assert envguard("create", "-c", f"http://user:{SECRET}@127.0.0.1:9/t/{TOKEN}/chan", "zlib") == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        "envguard: error: cannot read channels (http://127.0.0.1:9/chan)"
    )
    assert SECRET not in err[0] and TOKEN not in err[0] and "/t/" not in err[0]


def test_create_from_an_explicit_spec_with_md5(
    channels: dict[str, Path], tmp_path: Path, isolated_home: Path
) -> None:
    from envguard.engine.backends.cli import explicit_spec
    from envguard.engine.solver import solve
    from envguard.machine.platform import default_virtual_packages

    solved = solve(
        ["python=3.11", "six"],
        [channels["forge"].resolve().as_uri()],
        "linux-64",
        default_virtual_packages("linux-64", None),
    )
    md5_only = [dataclasses.replace(p, sha256="") for p in solved.packages]
    spec = tmp_path / "spec.txt"
    spec.write_text(explicit_spec(md5_only, "linux-64"))
    assert "#" in spec.read_text().splitlines()[-1]
    assert envguard("create", "--lock", str(spec), "-n", "from-explicit") == 0
    env = read_prefix(envs(isolated_home) / "from-explicit")
    assert sorted(p.name for p in env.packages) == ["python", "six", "zlib"]


def test_a_different_existing_lock_is_replaced_with_a_warning(
    channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    yml = environment_yml(tmp_path, channels, ["python=3.11", "zlib"], use=("forge",))
    assert envguard("create", "-f", str(yml), "-n", "one") == 0
    assert envguard("create", "-f", str(yml), "-n", "two") == 0  # same solve: same lock, nothing said
    assert "replaced the existing" not in capsys.readouterr().err
    environment_yml(tmp_path, channels, ["python=3.11", "zlib", "six"], use=("forge",))
    assert envguard("create", "-f", str(yml), "-n", "three") == 0
    assert "replaced the existing" in capsys.readouterr().err
    assert "- name: six" in (tmp_path / "conda-lock.yml").read_text()


def test_replacing_a_lock_git_tracks_says_how_to_see_and_undo_it(
    channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 43: `create -f` overwrote a git-tracked conda-lock.yml without the warning `export` gives."""
    yml = environment_yml(tmp_path, channels, ["python=3.11", "zlib"], use=("forge",))
    assert envguard("create", "-f", str(yml), "-n", "one") == 0
    lock = tmp_path / "conda-lock.yml"
    for argv in (["init", "-q"], ["add", "conda-lock.yml"], ["commit", "-qm", "lock"]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *argv], cwd=tmp_path, check=True)
    committed = lock.read_text()
    environment_yml(tmp_path, channels, ["python=3.11", "zlib", "six"], use=("forge",))
    capsys.readouterr()
    assert envguard("create", "-f", str(yml), "-n", "two") == 0
    said = [line for line in capsys.readouterr().err.splitlines() if "which git tracks" in line]
    assert len(said) == 1, said
    undo = said[0].split("`")[3]
    assert undo.startswith("git -C ") and undo.endswith("checkout -- conda-lock.yml"), said
    subprocess.run(shlex.split(undo), check=True, cwd="/")  # runs as printed, from anywhere
    assert lock.read_text() == committed


def test_the_table_rendered_while_linking_is_the_created_environments(
    channels: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from envguard.create import render
    from envguard.create import run as create_run

    forge = channels["forge"].resolve().as_uri()
    assert envguard("create", "-c", forge, "python=3.11", "zlib", "--prefix", str(tmp_path / "a")) == 0
    shown = capsys.readouterr().out
    assert " zlib " in shown and " python " in shown
    real = create_run.create
    results: list[create_run.CreateResult] = []

    def installed_other(*args: object, **kwargs: object) -> create_run.CreateResult:
        result = real(*args, **kwargs)  # type: ignore[arg-type]
        result = dataclasses.replace(result, packages=tuple(p for p in result.packages if p.name != "zlib"))
        results.append(result)
        return result

    monkeypatch.setattr(create_run, "create", installed_other)
    assert envguard("create", "-c", forge, "python=3.11", "zlib", "--prefix", str(tmp_path / "b")) == 0
    out = capsys.readouterr().out
    assert " zlib " not in out and " python " in out  # not the table rendered ahead from the plan
    assert out == render.render(results[0])
    assert render.render(results[0]) == render.render(
        results[0], render.package_table(results[0].packages, results[0].requested)
    )


def test_the_lock_and_the_table_are_rendered_once_the_engine_links(
    channels: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rendered on worker threads, they start when rattler starts linking (it needs no GIL), not before the
    Python work that precedes it (checking the local archives), which they would only slow down."""
    import time

    from envguard.create import render
    from envguard.create import run as create_run
    from envguard.engine.backends import embedded

    verified: list[bool] = []
    seen: dict[str, bool] = {}
    real_verify, real_lock = embedded.verify_local_archives, create_run.lock_text
    real_table = render.package_table

    def slow_verify(packages: object) -> None:
        time.sleep(0.3)  # a worker started before this returns runs while it sleeps
        real_verify(packages)  # type: ignore[arg-type]
        verified.append(True)

    def lock_text(*args: object) -> str:
        seen["lock"] = bool(verified)
        return real_lock(*args)  # type: ignore[arg-type]

    def package_table(*args: object) -> str:
        seen["table"] = bool(verified)
        return real_table(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(embedded, "verify_local_archives", slow_verify)
    monkeypatch.setattr(create_run, "lock_text", lock_text)
    monkeypatch.setattr(render, "package_table", package_table)
    yml = environment_yml(tmp_path, channels, ["python=3.11", "zlib"], use=("forge",))
    assert envguard("create", "-f", str(yml), "--prefix", str(tmp_path / "env"), "--backend", "embedded") == 0
    assert seen == {"lock": True, "table": True}
    assert "- name: zlib" in (tmp_path / "conda-lock.yml").read_text()
