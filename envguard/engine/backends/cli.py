"""conda / mamba / micromamba through their command line: `--json` everywhere, no shell, a timeout, and their
errors (conda's JSON error objects or plain stderr) turned into one-line BackendErrors that quote the tool.

The parsers are pure functions over the tools' JSON, tested against the real conda 26.7.1 CLI (the test kit);
specs no package set satisfies are bad input (exit 2), as with the embedded engine.
"""

from __future__ import annotations

import builtins
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from envguard import process
from envguard.channels import normalize, strip_credentials
from envguard.engine.backends.base import Backend, Change, Plan, Request, redact
from envguard.engine.install import Alongside
from envguard.errors import BackendError, BadInputError
from envguard.formats import explicit
from envguard.machine.platform import current_platform
from envguard.model import Package, sort_packages
from envguard.prefix.condaconfig import CondaInfo, parse_info
from envguard.prefix.records import iter_records, record_to_package
from envguard.process import one_line, timeout_seconds

TOOLS = ("micromamba", "mamba", "conda")


class CliBackend(Backend):
    """A conda-compatible command-line tool found at `exe`."""

    def __init__(self, tool: str, exe: str, timeout: float | None = None) -> None:
        self.name = tool
        self.exe = exe
        self.timeout = timeout if timeout is not None else timeout_seconds()

    def describe(self) -> str:
        return f"{self.name} {self.version()}"

    def version(self) -> str:
        return parse_version(self.run(["--version"], json_output=False))

    def info(self) -> CondaInfo:
        return parse_info(self.run_json(["info"]))

    def solve(self, request: Request) -> Plan:
        if request.locked:  # an explicit file installs without solving; conda's dry run of one prints nothing
            return Plan(request.platform, tuple(p for p in request.locked if p.manager == "conda"))
        with tempfile.TemporaryDirectory(prefix="envguard-dry-") as tmp:
            args = [
                "create",
                "--dry-run",
                "--yes",
                "--prefix",
                str(Path(tmp) / "dry"),
                *self._source(request, tmp),
            ]
            data = self.run_json(args, request)
        return Plan(request.platform, parse_actions(data))

    def install(
        self, prefix: Path, request: Request, plan: Plan | None = None, *, alongside: Alongside = None
    ) -> Plan:
        """Create `prefix`; once the tool exits 0 the environment is built and nothing here raises (conda
        prints no JSON at all for `create --file explicit.txt --json`), so create never deletes a finished
        prefix. `alongside` starts as the tool is run (this thread then only waits for it)."""
        with tempfile.TemporaryDirectory(prefix="envguard-create-") as tmp:
            args = ["create", "--yes", "--prefix", str(prefix), *self._source(request, tmp)]
            if alongside is not None:
                alongside()
            self.run([*args, "--json"], request=request)
        return Plan(request.platform, _installed(self.name, prefix))

    def update(self, prefix: Path, change: Change) -> list[str]:
        """`install --file explicit.txt` of the packages to link (the tool replaces a package of the same
        name; `--force-reinstall` where one may be the same archive), then `remove --force` of the ones to
        unlink (only those: nothing that depends on them goes with them). The tool writes
        conda-meta/history."""
        with tempfile.TemporaryDirectory(prefix="envguard-sync-") as tmp:
            if change.link:
                spec_file = Path(tmp) / "explicit.txt"
                spec_file.write_text(explicit_spec(change.link, change.platform), encoding="utf-8")
                args = ["install", "--yes", "--prefix", str(prefix), "--file", str(spec_file)]
                if change.reinstall & {p.name for p in change.link}:
                    args.append("--force-reinstall")
                self.run([*args, "--json"])  # conda prints no JSON for an explicit file: its exit code tells
        if change.unlink:
            names = sorted(p.name for p in change.unlink)
            self.run_json(["remove", "--yes", "--prefix", str(prefix), "--force", *names])
        return []

    def remove(self, prefix: Path) -> None:
        self.run_json(["env", "remove", "--yes", "--prefix", str(prefix)])

    def list(self, prefix: Path) -> tuple[Package, ...]:
        return parse_list(self.run_json(["list", "--prefix", str(prefix)]))

    def _source(self, request: Request, tmp: str) -> builtins.list[str]:
        """Arguments that say what to install: an explicit file for a locked request, else channels +
        specs."""
        extra = ["--platform", request.platform] if request.platform and request.platform != _native() else []
        if request.locked:
            spec_file = Path(tmp) / "explicit.txt"
            spec_file.write_text(explicit_spec(request.locked, request.platform), encoding="utf-8")
            return [*extra, "--file", str(spec_file)]
        channels = [arg for channel in request.channels for arg in ("--channel", channel)]
        return [*extra, "--override-channels", *channels, *request.specs]

    def run_json(self, args: Sequence[str], request: Request | None = None) -> Any:
        """Run the tool with `--json` and return the parsed output; failures become BackendError."""
        text = self.run([*args, "--json"], request=request)
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise BackendError(
                f"{self.name} {args[0]} printed output that is not JSON ({one_line(text, 120)}); "
                "check the tool works on its own"
            ) from exc
        if isinstance(data, Mapping) and data.get("success") is False:
            raise BackendError(f"{self.name} {args[0]} failed: {error_text(data)}")
        return data

    def run(self, args: Sequence[str], *, json_output: bool = True, request: Request | None = None) -> str:
        """Run `exe args` (no shell) within the timeout and return stdout."""
        try:
            done = process.run([self.exe, *args], timeout=self.timeout, env=_environment(request))
        except process.TimedOut as exc:
            raise BackendError(
                f"{self.name} {args[0]} did not finish within {self.timeout:g} s; raise "
                "ENVGUARD_BACKEND_TIMEOUT or use --backend embedded"
            ) from exc
        except OSError as exc:
            raise BackendError(
                f"{self.name}: cannot run {self.exe} ({exc.strerror}); install it or use --backend embedded"
            ) from exc
        if done.returncode != 0:
            reason = failure_text(done.stdout, done.stderr)
            if unsolvable(done.stdout, done.stderr):  # the specs' fault, as with the embedded engine: exit 2
                platform = request.platform if request is not None and request.platform else _native()
                raise BadInputError(
                    f"{self.name} cannot solve for {platform}: {reason}; relax the specs or add a channel"
                )
            raise BackendError(f"{self.name} {args[0]} failed (exit {done.returncode}): {reason}")
        return done.stdout


def _installed(tool: str, prefix: Path) -> tuple[Package, ...]:
    """What the tool installed, read from the prefix's conda-meta (no second tool call that could fail)."""
    if not (prefix / "conda-meta").is_dir():
        raise BackendError(f"{tool} create exited 0 but {prefix} is not a conda environment (no conda-meta/)")
    return sort_packages(record_to_package(record) for _path, record in iter_records(prefix))


def _native() -> str:
    return current_platform()


def _environment(request: Request | None) -> dict[str, str]:
    """The tool's environment: ours, with CONDA_OVERRIDE_CUDA/GLIBC set to exactly what envguard checked."""
    env = dict(os.environ)
    if request is not None and request.virtual_packages:
        cuda = next((v.version for v in request.virtual_packages if v.name == "__cuda"), "")
        env["CONDA_OVERRIDE_CUDA"] = cuda
        glibc = next((v.version for v in request.virtual_packages if v.name == "__glibc"), None)
        if glibc:
            env["CONDA_OVERRIDE_GLIBC"] = glibc
    return env


# --- parsers (pure) --------------------------------------------------------------------------------------


def error_text(data: Mapping[str, Any]) -> str:
    """One line from conda's JSON error object (`exception_name`, `message`, `error`)."""
    name = str(data.get("exception_name") or "")
    message = str(data.get("message") or data.get("error") or "unknown error")
    return one_line(f"{name}: {message}" if name and not message.startswith(name) else message)


def failure_text(stdout: str, stderr: str) -> str:
    """The reason a tool gave: its JSON error object on stdout when there is one, else the end of stderr."""
    try:
        data = json.loads(stdout)
    except ValueError:
        data = None
    if isinstance(data, Mapping) and (data.get("message") or data.get("error")):
        return error_text(data)
    lines = [ln for ln in (stderr or stdout).splitlines() if ln.strip()]
    return one_line(" ".join(lines[-3:])) if lines else "no error message"


# conda's exceptions for specs that no package set satisfies; micromamba/mamba (libmamba) say it in words
UNSOLVABLE = frozenset(
    {
        "PackagesNotFoundError",
        "PackagesNotFoundInChannelsError",
        "UnsatisfiableError",
        "ResolvePackageNotFound",
        "SpecsConfigurationConflictError",
        "NoPackagesFoundError",
    }
)
_LIBMAMBA_UNSOLVABLE = ("could not solve for environment specs", "nothing provides")


def unsolvable(stdout: str, stderr: str) -> bool:
    """The tool failed because the specs cannot be satisfied (not because the tool or the disk broke)."""
    try:
        data = json.loads(stdout)
    except ValueError:
        data = None
    if isinstance(data, Mapping) and str(data.get("exception_name") or "") in UNSOLVABLE:
        return True
    text = f"{stdout}\n{stderr}"
    return any(name in text for name in UNSOLVABLE) or any(p in text.lower() for p in _LIBMAMBA_UNSOLVABLE)


def parse_version(text: str) -> str:
    """`conda 26.7.1` / `2.0.5` -> the version."""
    words = text.strip().split()
    return words[-1] if words else "unknown"


def parse_list(data: Any) -> tuple[Package, ...]:
    """`conda list --json` entries -> packages (sorted as the model sorts)."""
    if not isinstance(data, list):
        raise BackendError("conda list --json did not print a list; check the tool's version")
    return sort_packages(_entry(e) for e in data if isinstance(e, Mapping))


def parse_actions(data: Mapping[str, Any]) -> tuple[Package, ...]:
    """The LINK actions of `create --dry-run --json` -> packages; FETCH entries add url and hashes."""
    actions = data.get("actions") or {}
    if isinstance(actions, list):  # micromamba prints a list of action blocks on some versions
        actions = actions[0] if actions else {}
    fetched = {
        str(f.get("dist_name") or f.get("fn", "")).removesuffix(".conda").removesuffix(".tar.bz2"): f
        for f in actions.get("FETCH") or ()
        if isinstance(f, Mapping)
    }
    packages = []
    for entry in actions.get("LINK") or ():
        if isinstance(entry, Mapping):
            extra = fetched.get(str(entry.get("dist_name", "")), {})
            packages.append(_entry({**extra, **entry}))
    return sort_packages(packages)


def _entry(entry: Mapping[str, Any]) -> Package:
    base = strip_credentials(str(entry.get("base_url") or entry.get("channel") or ""))
    subdir = str(entry.get("platform") or entry.get("subdir") or "")
    url = strip_credentials(str(entry.get("url") or ""))
    return Package(
        manager="conda" if entry.get("channel") != "pypi" else "pip",
        name=str(entry["name"]),
        version=str(entry["version"]),
        build=str(entry.get("build_string") or entry.get("build") or ""),
        build_number=int(entry.get("build_number") or 0),
        channel=normalize(base),
        subdir=subdir,
        url=url,
        md5=str(entry.get("md5") or ""),
        sha256=str(entry.get("sha256") or ""),
        depends=tuple(str(d) for d in entry.get("depends") or ()),  # from FETCH entries: a lock needs them
    )


__all__ = ["TOOLS", "CliBackend", "parse_actions", "parse_list", "redact"]


def explicit_spec(packages: Sequence[Package], platform: str) -> str:
    """The `@EXPLICIT` file `conda create --file` installs without solving (the one explicit writer)."""
    text, _warnings = explicit.render(packages, [f"# platform: {platform}"])
    return text
