"""rattler's link step in a child process, for installs where rattler downloads and extracts archives
itself (a solved request from a remote channel, archives not yet in the package cache), so envguard cannot
prove their paths.json first: a Rust panic there (an absolute path makes rattler abort the whole process,
"Rayon: detected unexpected panic; aborting") ends the child, and envguard says so in one line, exit 3, and
rolls the target back. Where every archive is on disk the link runs in-process (engine.install.link) after
the archives were checked: a child costs a Python start-up and rattler's import (~0.2 s).

The parent hands the child the solved records (rattler's JSON), the target, the cache, and the channel
credentials on its stdin (never on disk or in argv); `python -m envguard.engine.linkjob` reads them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from envguard.engine.cachecheck import refuse_escaping_folder
from envguard.engine.install import Alongside, link
from envguard.engine.solver import auth_entries, client_with
from envguard.errors import BackendError, EnvguardError
from envguard.output import waiting
from envguard.process import one_line

CHILD_FAILED = 3


def needs_fetch(records: Sequence[Any], pkgs_dir: Path) -> bool:
    """Whether rattler would download (and extract) an archive itself: a record from a remote channel whose
    package is not in the cache as that very archive. rattler's `NAME-VERSION-BUILD.lock` beside an
    extracted folder holds a revision (8 bytes) and the sha256 it was extracted from; any other layout
    counts as a fetch (the safe side: a child process). A package the cache holds is checked (bad input
    when its paths.json installs outside the environment)."""
    for record in records:
        if str(record.url).startswith("file:"):
            continue
        stem = str(record.file_name).removesuffix(".conda").removesuffix(".tar.bz2")
        try:
            with open(pkgs_dir / f"{stem}.lock", "rb") as handle:
                held = handle.read(41)
        except OSError:
            return True
        sha256 = record.sha256
        folder = pkgs_dir / stem
        if len(held) != 40 or not isinstance(sha256, bytes) or held[8:] != sha256 or not folder.is_dir():
            return True
        # extracted earlier, maybe by a child that then crashed on it: what rattler will link from is checked
        label = f"{record.name.normalized} {record.version} {record.build}"
        refuse_escaping_folder(label, sha256.hex(), folder)
    return False


def link_in_child(
    records: Sequence[Any],
    prefix: Path,
    specs: Sequence[str],
    *,
    platform: str | None,
    pkgs_dir: Path,
    progress: bool,
    alongside: Alongside = None,
) -> None:
    """`install.link` of these records in a child process; its failure (a panic included) is one line."""
    job = {
        "records": [
            {"record": json.loads(r.to_json()), "file_name": r.file_name, "url": r.url, "channel": r.channel}
            for r in records
        ],
        "prefix": str(prefix),
        "pkgs_dir": str(pkgs_dir),
        "platform": platform,
        "specs": list(specs),
        "auth": auth_entries(),
    }
    env = {**os.environ, "RUST_BACKTRACE": "0"}  # a panic's message, not 300 lines of its stack
    if alongside is not None:
        alongside()
    with (
        waiting(f"downloading and linking {len(records)} package(s)", progress),
        tempfile.TemporaryFile() as errors,
    ):
        done = subprocess.run(
            [sys.executable, "-m", "envguard.engine.linkjob"],
            input=json.dumps(job).encode(),
            stdout=subprocess.DEVNULL,
            stderr=errors,
            env=env,
            check=False,
        )
        errors.seek(0)
        text = errors.read().decode("utf-8", "replace")
    if done.returncode != 0:
        raise BackendError(_failure(done.returncode, text, prefix))


def _failure(code: int, text: str, prefix: Path) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    panic = next((i for i, line in enumerate(lines) if " panicked at " in line), None)
    if panic is not None:
        message = lines[panic + 1] if panic + 1 < len(lines) else lines[panic]
        return (
            f"embedded engine (py-rattler) crashed while installing into {prefix} (a Rust panic: "
            f"{one_line(message, 240)}); nothing was kept. A broken or hostile package, or a bug in rattler"
        )
    if code == CHILD_FAILED and lines:
        return lines[-1]  # the child's own one-line error
    return f"embedded engine (py-rattler) ended with exit code {code} while installing into {prefix}"


def _records(job: dict[str, Any], folder: str) -> list[Any]:
    """rattler RepoDataRecords rebuilt from their JSON (digests and size passed back explicitly)."""
    import rattler

    records = []
    for n, item in enumerate(job["records"]):
        data = item["record"]
        path = os.path.join(folder, f"{n}.json")
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(data, handle)
        package = rattler.PackageRecord.from_index_json(
            path,  # type: ignore[arg-type]  # rattler's own docstring passes a str
            size=data.get("size"),
            sha256=data.get("sha256"),
            md5=data.get("md5"),
        )
        records.append(rattler.RepoDataRecord(package, item["file_name"], item["url"], item["channel"]))
    return records


def main() -> int:
    job = json.loads(sys.stdin.buffer.read())
    try:
        with tempfile.TemporaryDirectory(prefix="envguard-link-") as folder:
            records = _records(job, folder)
        auth = job.get("auth")
        link(
            records,
            Path(job["prefix"]),
            job["specs"],
            platform=job["platform"],
            pkgs_dir=Path(job["pkgs_dir"]),
            progress=False,
            client=client_with(auth) if auth else None,
        )
    except EnvguardError as exc:
        sys.stderr.write(f"{exc}\n")
        return CHILD_FAILED
    return 0


if __name__ == "__main__":
    sys.stderr.flush()
    os._exit(main())  # rattler's runtime threads can crash CPython's finalisation (see cli.boundary)
