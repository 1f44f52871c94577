"""`envguard verify` logic, the CI step: rebuild a lock into a temporary prefix with the embedded engine
(every archive's sha256 checked against the lock first), check the rebuilt environment against the lock,
optionally run the DataLoader smoke test with its interpreter, and give a verdict.

Stages run in order and stop at the first failure: a tampered archive is never linked.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from envguard.attest.envelope import Signing
from envguard.check import check_environment, parse_target, severity
from envguard.engine import install, pipengine
from envguard.engine.cacheuse import using_cache
from envguard.engine.install import default_pkgs_dir
from envguard.engine.venvs import find_python, make_venv, remove_bootstrap
from envguard.errors import BadInputError
from envguard.formats import detect_kind
from envguard.formats.condalock import read as condalock
from envguard.formats.condalock.meta import EXCLUDE_NEWER_KEY
from envguard.machine import virtual
from envguard.machine.platform import current_platform
from envguard.model import Environment, Package
from envguard.prefix.reader import read_prefix
from envguard.process import hold_signals, restore_signals, sigterm_as_interrupt
from envguard.verify import attest as attestation
from envguard.verify.trash import discard

if TYPE_CHECKING:
    from envguard.smoke import SmokeReport  # the feature itself is imported where --smoke runs it

Status = Literal["ok", "failed", "skipped"]


@dataclass(frozen=True, slots=True)
class Mismatch:
    """A package whose archive does not hash to what the lock says."""

    package: Package
    algorithm: str
    expected: str
    actual: str
    path: str


@dataclass(frozen=True, slots=True)
class Stage:
    """One step of the verification and how it went."""

    name: str
    status: Status
    seconds: float = 0.0
    detail: str = ""


@dataclass(frozen=True)
class VerifyResult:
    """Everything verify found; `passed` when no stage failed."""

    lock: str
    platform: str
    prefix: str | None
    kept: bool
    stages: tuple[Stage, ...]
    mismatches: tuple[Mismatch, ...] = ()
    check: Any = None
    smoke: SmokeReport | None = None
    warnings: tuple[str, ...] = field(default=())
    attestation: attestation.Attestation | None = None
    exclude_newer: str | None = None  # solved as of this time (read only when failed): a re-lock keeps it

    @property
    def passed(self) -> bool:
        return not any(s.status == "failed" for s in self.stages)

    def verdict(self) -> str:
        if self.passed:
            return f"PASS: {self.lock} rebuilds for {self.platform} and matches its lock"
        failed = next(s for s in self.stages if s.status == "failed")
        return f"FAIL ({failed.name}): {failed.detail}"


@dataclass(frozen=True)
class VerifyOptions:
    lock: Path
    platform: str | None = None
    smoke: bool = False
    keep: bool = False
    pkgs_dir: Path | None = None
    smoke_budget: float = 25.0
    progress: bool = False  # progress bars on stderr (a terminal, not --json)
    attest: Path | None = None  # after a PASS, write a signed attestation here
    signing: Signing = field(default_factory=lambda: Signing("unsigned"))


def read_lock(path: Path, platform: str | None) -> Environment:
    """The lock's environment for the platform (parsed once per exact content, as check parses it); an
    environment.yml or an empty lock is bad input."""
    if not os.path.isfile(path):  # os.path: a name too long for the file system is no file either
        raise BadInputError(f"{path}: no such lock file; pass --lock FILE (write one with `envguard lock`)")
    env = parse_target(path, platform)
    if env.spec_only:
        raise BadInputError(
            f"{path}: an environment.yml is not a lock; lock it first (`envguard lock -f {path}`)"
        )
    if not env.packages:
        raise BadInputError(f"{path}: no packages for {env.platform or platform}; nothing to rebuild")
    return env


def venv_python(env: Environment, path: Path) -> Path:
    """The interpreter a pip-only lock (a venv's) is rebuilt with, or bad input saying why there is none."""
    if env.platform and env.platform != current_platform():
        raise BadInputError(
            f"{path}: a pip-only lock for {env.platform} is rebuilt in a venv of that platform's Python; run "
            "verify there"
        )
    if not env.python:
        raise BadInputError(
            f"{path}: a pip-only lock that does not say which Python it needs (an older envguard wrote it); "
            "re-lock the venv with `envguard lock PREFIX`"
        )
    implementation = env.python_implementation or "cpython"
    found = find_python(env.python, implementation)
    if found is None:
        word = {"cpython": "CPython", "pypy": "PyPy"}.get(implementation, implementation)
        stem = "pypy" if implementation == "pypy" else "python"
        minor = ".".join(env.python.split(".")[:2])
        raise BadInputError(
            f"{path}: a pip-only lock for {word} {env.python}, but no {stem}{minor} runs here (neither the "
            f"running interpreter nor one on PATH); install {word} {minor} or run verify where it is"
        )
    return found[0]


def verify(options: VerifyOptions, later: contextlib.ExitStack | None = None) -> VerifyResult:
    """Run every stage; a failed stage makes the verdict FAIL (exit 1), operational problems raise (exit
    3). With `later`, the temporary prefix is deleted when that stack closes (the CLI closes it after
    printing the report) instead of before returning."""
    env = read_lock(options.lock, options.platform)
    platform = env.platform or options.platform or current_platform()
    pkgs_dir = options.pkgs_dir or default_pkgs_dir()
    python = None if env.conda_packages() else venv_python(env, options.lock)  # a venv's lock
    signer = attestation.prepare(options.signing) if options.attest is not None else None
    with _prefix(options.keep, later) as prefix:
        state = _Run(env, platform, prefix, pkgs_dir)
        state.python = python
        state.lock_path, state.smoke_budget = options.lock, options.smoke_budget
        state.progress = options.progress
        with using_cache(pkgs_dir):  # `envguard clean` waits until what was fetched is linked
            state.stage("hashes", state.hashes)
            state.stage("install", state.install)
        state.stage("check", state.check)
        if options.smoke:
            state.stage("smoke", state.run_smoke)
        target = options.attest
        if target is not None:
            state.stage("attest", lambda: state.attest(target, options.signing, signer))
        failed = any(s.status == "failed" for s in state.stages)
        return VerifyResult(
            lock=str(options.lock),
            platform=platform,
            prefix=str(prefix) if options.keep else None,
            kept=options.keep,
            stages=tuple(state.stages),
            mismatches=tuple(state.mismatches),
            check=state.report,
            smoke=state.smoke_result,
            warnings=tuple(state.warnings),
            attestation=state.attestation,
            # only a failed verify's re-lock line shows it, and it costs a second, uncached parse of the lock
            exclude_newer=solved_as_of(options.lock) if failed else None,
        )


def solved_as_of(lock: Path) -> str | None:
    """The time a conda-lock.yml was solved as of (`lock --exclude-newer`), from its metadata."""
    if detect_kind(lock) != "conda-lock":
        return None
    return condalock.read_lock(lock).custom.get(EXCLUDE_NEWER_KEY)


@contextlib.contextmanager
def _prefix(keep: bool, later: contextlib.ExitStack | None) -> Iterator[Path]:
    with sigterm_as_interrupt(), contextlib.ExitStack() as own:  # Ctrl-C, SIGTERM: the temp folder still goes
        unheld = hold_signals()  # until the folder is made and its deletion arranged (a signal between: left)
        try:
            folder = Path(tempfile.mkdtemp(prefix="envguard-verify-"))
            if later is not None and not keep:  # deleted once the report is out, off the user's clock
                later.callback(discard, folder)
            elif not keep:
                own.callback(shutil.rmtree, folder, ignore_errors=True)
        finally:
            restore_signals(unheld)  # a signal held meanwhile is raised here: the deletion is arranged
        yield folder / "env"


class _Run:
    """The mutable state of one verification (stages append to it)."""

    def __init__(self, env: Environment, platform: str, prefix: Path, pkgs_dir: Path) -> None:
        self.env, self.platform, self.prefix, self.pkgs_dir = env, platform, prefix, pkgs_dir
        self.stages: list[Stage] = []
        self.mismatches: list[Mismatch] = []
        self.warnings: list[str] = list(env.warnings)
        self.fetched: Any = None
        self.report: Any = None
        self.smoke_result: SmokeReport | None = None
        self.lock_path: Path | None = None
        self.smoke_budget = 25.0
        self.progress = False
        self.python: Path | None = None  # a pip-only lock: rebuilt in a venv of this interpreter
        self.live: Environment | None = None  # the rebuilt environment, as the check stage read it
        self.attestation: attestation.Attestation | None = None

    def stage(self, name: str, action: Callable[[], Stage]) -> None:
        if any(s.status == "failed" for s in self.stages):
            self.stages.append(Stage(name, "skipped", detail="an earlier stage failed"))
            return
        start = time.perf_counter()
        outcome = action()
        self.stages.append(Stage(name, outcome.status, time.perf_counter() - start, outcome.detail))

    def hashes(self) -> Stage:
        self.fetched = install.fetch(self.env.packages, self.pkgs_dir, progress=self.progress)
        for archive in self.fetched.mismatches:
            self.mismatches.append(
                Mismatch(
                    archive.package, archive.algorithm, archive.expected, archive.actual, str(archive.path)
                )
            )
        for archive in self.fetched.md5_only:
            self.warnings.append(f"{archive.package.describe()}: the lock has no sha256, checked md5 only")
        if self.mismatches:
            names = ", ".join(
                f"{m.package.name} {m.package.version} {m.package.build}" for m in self.mismatches
            )
            return Stage("hashes", "failed", detail=f"archive hash does not match the lock: {names}")
        return Stage("hashes", "ok", detail=f"{len(self.fetched.archives)} archive(s) match the lock")

    def install(self) -> Stage:
        assert self.fetched is not None
        poisoned = install.verify_cache(self.fetched, self.pkgs_dir)
        if poisoned:  # the archives were fine but the cache that would be linked was not: FAIL, naming it
            detail = "; ".join(p.describe() for p in poisoned[:3])
            return Stage("install", "failed", detail=f"{detail}; removed, run again to re-extract")
        if self.python is not None:
            return self.install_venv()
        specs = [r.spec for r in self.env.requested if r.manager == "conda"]
        engine = pipengine.select() if self.env.pip_packages() else None
        self.warnings += install.install(
            self.fetched,
            self.prefix,
            specs=specs,
            platform=self.platform,
            pkgs_dir=self.pkgs_dir,
            progress=self.progress,
            cache_checked=True,  # just above, so a poisoned folder is this stage's FAIL
            engine=engine,
        )
        conda, pip = self.env.conda_packages(), self.env.pip_packages()
        with_engine = f" (pip packages with {engine.describe()})" if engine is not None else ""
        return Stage(
            "install",
            "ok",
            detail=f"{len(conda)} conda + {len(pip)} pip package(s) into a temporary prefix{with_engine}",
        )

    def install_venv(self) -> Stage:
        """A pip-only lock: a fresh venv of the locked Python, the locked packages with pip (`--no-deps`,
        hashed ones `--require-hashes`), minus the pip/setuptools the venv brought that the lock lacks."""
        assert self.python is not None
        engine = pipengine.select()
        make_venv(self.python, self.prefix, engine)
        self.warnings += install.install(
            self.fetched,
            self.prefix,
            specs=[],
            platform=self.platform,
            pkgs_dir=self.pkgs_dir,
            engine=engine,
        )
        remove_bootstrap(self.prefix, self.env.pip_packages())
        return Stage(
            "install",
            "ok",
            detail=f"0 conda + {len(self.env.pip_packages())} pip package(s) into a fresh venv "
            f"(python {self.python}, with {engine.describe()})",
        )

    def check(self) -> Stage:
        live = read_prefix(self.prefix, virtual.detect())
        if {p.subdir for p in live.conda_packages()} <= {"noarch", self.platform}:
            # a noarch-only prefix cannot tell its platform; it was linked for this one
            live = dataclasses.replace(live, platform=self.platform)
        self.live = live
        self.report = check_environment(live, self.env)
        if not self.report.clean:  # the differences themselves: the report's check findings, each whole
            count = sum(1 for f in self.report.findings if severity(f) == "drift")
            return Stage("check", "failed", detail=f"the rebuilt environment differs from the lock ({count})")
        return Stage("check", "ok", detail="no drift between the rebuilt environment and the lock")

    def attest(self, target: Path, signing: Signing, signer: Any) -> Stage:
        assert self.live is not None and self.lock_path is not None
        done = attestation.attest(
            target,
            signing,
            signer,
            lock=self.lock_path,
            locked=self.env,
            live=self.live,
            prefix=self.prefix,
            platform=self.platform,
            stages=[{"name": s.name, "status": s.status, "detail": s.detail} for s in self.stages],
        )
        self.attestation = done
        if done.failed:
            return Stage("attest", "failed", detail=f"not attested: {done.problem}")
        if done.problem:
            self.warnings.append(f"attestation: {done.problem}")
        return Stage(
            "attest",
            "ok",
            detail=f"wrote {target} ({done.signed}; {done.packages} package(s) in the manifest)",
        )

    def run_smoke(self) -> Stage:
        if self.platform != current_platform():
            return Stage(
                "smoke", "skipped", detail=f"{self.platform} environments cannot run on this machine"
            )
        return smoke_stage(self.prefix, self)


def smoke_stage(prefix: Path, run: _Run) -> Stage:
    """The DataLoader smoke test in the rebuilt environment's own interpreter; any FAIL finding fails verify.
    Seeded streams are compared with the lock's recorded fingerprints when it has them."""
    # imported here: the smoke feature is ~70 modules that only `--smoke` uses
    from envguard.smoke import SmokeOptions, run_smoke

    lock = run.lock_path if run.env.fingerprints is not None else None
    report = run_smoke(SmokeOptions(source=str(prefix), budget_s=run.smoke_budget, lock=lock))
    run.smoke_result = report
    failed = [f for f in report.findings if f.status == "FAIL"]
    if failed:
        detail = "; ".join(f"{f.check}: {f.evidence}" for f in failed)
        return Stage("smoke", "failed", detail=f"smoke test failed: {detail}"[:400])
    golden = " (streams match the lock's fingerprints)" if lock is not None else ""
    return Stage("smoke", "ok", detail=f"{len(report.findings)} check(s), none failed{golden}")
