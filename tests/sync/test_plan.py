"""The sync plan (pure): from check's differences to link / unlink / replace / reinstall, conda's first;
what a sync cannot do is bad input saying what to do instead."""

from __future__ import annotations

import pytest

from envguard.check.report import check_environment
from envguard.errors import BadInputError
from envguard.model import (
    LOCAL_ORIGIN,
    Environment,
    Manager,
    Package,
    PipOrigin,
    RequestedSpec,
    make_environment,
)
from envguard.sync.plan import SyncPlan, plan_sync, reinstall_targets, requested_changes
from envguard.sync.render import word


def conda(name: str, version: str, build: str = "0", channel: str = "conda-forge") -> Package:
    url = f"https://conda.anaconda.org/{channel}/linux-64/{name}-{version}-{build}.conda"
    return Package("conda", name, version, build, channel=channel, subdir="linux-64", url=url, md5="0" * 32)


def pip(name: str, version: str, origin: PipOrigin | None = None, sha256: str = "") -> Package:
    return Package("pip", name, version, origin=origin, sha256=sha256)


def env(kind: str, *packages: Package, **fields: object) -> Environment:
    source = "conda-lock.yml" if kind == "conda-lock" else "/envs/x"
    extra = {} if kind == "conda-lock" else {"prefix": "/envs/x"}
    return make_environment(
        kind=kind, source=source, platform="linux-64", packages=packages, **extra, **fields
    )


def planned(
    live: Environment, lock: Environment, reinstall: set[tuple[Manager, str]] | None = None
) -> SyncPlan:
    return plan_sync(live, lock, check_environment(live, lock).findings, reinstall or set())


def test_every_kind_of_difference_is_one_step_conda_first() -> None:
    lock = env("conda-lock", conda("numpy", "1.26.4"), conda("zlib", "1.3.1"), pip("tinyproj", "1.0.0"))
    live = env(
        "prefix",
        conda("numpy", "2.0.1"),
        conda("six", "1.16.0"),
        pip("tinyproj", "1.1.0"),
        pip("other-pkg", "0.3.0"),
    )
    plan = planned(live, lock)
    assert [(s.manager, s.action, s.name, word(s)) for s in plan.steps] == [
        ("conda", "unlink", "six", "remove"),
        ("conda", "replace", "numpy", "downgrade"),
        ("conda", "link", "zlib", "install"),
        ("pip", "unlink", "other-pkg", "uninstall"),
        ("pip", "replace", "tinyproj", "downgrade"),
    ]
    assert [p.name for p in plan.to_link("conda")] == ["numpy", "zlib"]
    assert [p.version for p in plan.to_unlink("conda")] == ["1.16.0", "2.0.1"]
    assert planned(lock_as_live := env("prefix", *lock.packages), lock).empty, lock_as_live


def test_a_channel_change_is_a_change_and_files_are_reinstalls() -> None:
    lock = env("conda-lock", conda("zlib", "1.3.1", channel="conda-forge"), conda("numpy", "1.26.4"))
    live = env("prefix", conda("zlib", "1.3.1", channel="other"), conda("numpy", "1.26.4"))
    plan = planned(live, lock, {("conda", "numpy"), ("conda", "zlib")})
    assert [(s.action, s.name, word(s)) for s in plan.steps] == [
        ("replace", "zlib", "change"),  # changed anyway: not a reinstall as well
        ("reinstall", "numpy", "reinstall"),
    ]


def test_an_unrecorded_local_path_is_reinstalled_from_where_it_is() -> None:
    """A lock without the wheel's path matches any local path; a reinstall takes the installed copy's own
    origin and hash."""
    wheel = "file:///wheels/tinyproj-1.0.0-py3-none-any.whl"
    lock = env("conda-lock", pip("tinyproj", "1.0.0", PipOrigin(url=LOCAL_ORIGIN)))
    live = env("venv", pip("tinyproj", "1.0.0", PipOrigin(url=wheel), sha256="ab" * 32))
    [step] = planned(live, lock, {("pip", "tinyproj")}).steps
    assert step.action == "reinstall" and step.new is not None
    assert (step.new.url, step.new.sha256, step.new.origin) == (wheel, "ab" * 32, PipOrigin(url=wheel))


def test_what_sync_cannot_do_is_bad_input() -> None:
    lock = env("conda-lock", conda("zlib", "1.3.1"), pip("six", "1.16.0"))
    with pytest.raises(BadInputError, match=r"is a venv, and conda-lock.yml locks 1 conda package\(s\)"):
        planned(env("venv", pip("six", "1.16.0")), lock)
    pip_lock = env("conda-lock", pip("six", "1.16.0"), python="3.11.7")
    with pytest.raises(BadInputError, match=r"runs Python 3\.12\.1 and conda-lock\.yml records 3\.11\.7"):
        planned(env("venv", pip("six", "1.16.0"), python="3.12.1"), pip_lock)


def test_reinstall_targets_from_check_files_labels() -> None:
    labels = ["numpy-1.26.4-py311h64a7726_0", "tinyproj 1.0.0 (pip)", "cuda-version-11.8-h70ddcb2_3"]
    assert reinstall_targets(labels) == {("conda", "numpy"), ("pip", "tinyproj"), ("conda", "cuda-version")}


def test_history_records_requests_as_conda_does() -> None:
    """The lock's own request for a package linked; the exact build for one the environment had asked for;
    a remove spec for a package it had asked for and that goes."""
    lock = env(
        "conda-lock",
        conda("numpy", "1.26.4", "py311_0"),
        conda("zlib", "1.3.1"),
        conda("libzlib", "1.3.1"),
        requested=(RequestedSpec("conda", "numpy<2"),),
    )
    live = env(
        "prefix",
        conda("numpy", "2.0.1"),
        conda("zlib", "1.2.13"),
        conda("six", "1.16.0"),
        requested=(RequestedSpec("conda", "zlib"), RequestedSpec("conda", "six")),
    )
    plan = planned(live, lock)
    assert requested_changes(plan, live, lock) == (("numpy<2", "zlib==1.3.1=0"), ("six",))
