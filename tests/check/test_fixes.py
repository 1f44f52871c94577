"""check's fix lines (pure): what each kind of environment gets against a lock and an environment.yml, every
argument quoted, never a line that cannot work there (tests/check/test_check.py and tests/sync run them)."""

from __future__ import annotations

from envguard.check.fixes import fix_commands
from envguard.check.report import check_environment
from envguard.model import LOCAL_ORIGIN, Environment, Package, PipOrigin, RequestedSpec, make_environment

PREFIX = "/envs/my env"


def live(kind: str, *packages: Package, python: str | None = None) -> Environment:
    return make_environment(kind=kind, source=PREFIX, prefix=PREFIX, python=python, packages=packages)


def lock(*packages: Package, python: str | None = None, kind: str = "conda-lock") -> Environment:
    return make_environment(kind=kind, source="my lock.yml", python=python, packages=packages)


def fixes(live_env: Environment, target: Environment) -> list[str]:
    return list(fix_commands(live_env, target, check_environment(live_env, target).findings))


ZLIB = Package("conda", "zlib", "1.3.1", "h4ab18f5_1", channel="conda-forge", subdir="linux-64")
PIP = Package("pip", "pip", "24.0")


def test_a_lock_gets_sync_and_pip_lines_only_where_there_is_pip() -> None:
    wheel = "file:///wheels/tinyproj-1.0.0-py3-none-any.whl"
    target = lock(PIP, Package("pip", "tinyproj", "1.0.0", origin=PipOrigin(url=wheel)))
    sync = "envguard sync '/envs/my env' --lock 'my lock.yml' --yes"
    assert fixes(live("venv", PIP), target) == [
        sync,
        f"'/envs/my env/bin/python' -m pip install --no-deps 'tinyproj @ {wheel}'",
    ]
    assert fixes(live("venv"), lock(Package("pip", "six", "1.16.0"))) == [sync]  # no pip: no pip line
    # a project from its folder, editable: `-e FOLDER`; a local path the lock did not record: name==version
    editable = Package("pip", "proja", "0.1.0", origin=PipOrigin(url="file:///src/proja", editable=True))
    unrecorded = Package("pip", "other", "0.3.0", origin=PipOrigin(url=LOCAL_ORIGIN))
    lines = fixes(live("venv", PIP), lock(PIP, editable, unrecorded))
    assert lines[1] == "'/envs/my env/bin/python' -m pip install --no-deps other==0.3.0 -e /src/proja", lines


def test_no_line_that_cannot_work_there() -> None:
    """A venv cannot hold a lock's conda packages or change its Python in place: no sync line for it; a conda
    environment against a lock never gets conda's own commands (a pixi or rattler prefix has no conda)."""
    assert fixes(live("venv"), lock(ZLIB)) == []
    assert fixes(live("venv", python="3.12.1"), lock(python="3.11.7")) == []
    conda = fixes(live("prefix"), lock(ZLIB))
    assert conda == ["envguard sync '/envs/my env' --lock 'my lock.yml' --yes"]


def test_an_environment_yml_rebuilds_a_conda_environment_and_gives_a_venv_its_pip_lines() -> None:
    spec = make_environment(
        kind="environment.yml",
        source="environment.yml",
        requested=(RequestedSpec("conda", "zlib"), RequestedSpec("pip", "tinyproj==1.0.0")),
    )
    assert fixes(live("prefix"), spec) == ["envguard create -f environment.yml -p '/envs/my env' --force"]
    assert fixes(live("venv", PIP), spec) == [
        "'/envs/my env/bin/python' -m pip install --no-deps tinyproj==1.0.0"
    ]
