"""Package archives with their integrity proven: located in a package cache or a file:// channel, or
downloaded, and hashed against the sha256 (else md5) that the lock or repodata promised.

rattler does not re-hash archives it reads from file:// channels, so envguard hashes every archive itself
before anything is linked; a mismatch names the package. Remote archives are downloaded into the package cache
(so the next run is offline) and installed from there.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envguard.atomic import child, write_bytes, write_text
from envguard.cache import cache_path
from envguard.cache.digests import DigestMemo
from envguard.channels import credential_for, remember, strip_credentials
from envguard.errors import BadInputError, EnvguardError, OperationalError, first_line
from envguard.formats.localsource import local_path
from envguard.model import PIP_ARCHIVES, Package
from envguard.prefix.condaconfig import channel_alias

DOWNLOAD_TIMEOUT = 120.0
_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class Archive:
    """A package's archive on local disk, hashed; `verified` is False when the digest did not match."""

    package: Package
    path: Path
    algorithm: str
    expected: str
    actual: str

    @property
    def verified(self) -> bool:
        return self.actual == self.expected

    @property
    def local_url(self) -> str:
        return self.path.resolve().as_uri()


def fetch(
    packages: Sequence[Package],
    pkgs_dir: Path | None,
    *,
    workers: int = 8,
    done: Callable[[Package], None] | None = None,
) -> list[Archive]:
    """Every package's archive (conda packages, and pip packages locked with a file URL and hash), located
    (pkgs_dir/<file name>, a file:// URL) or downloaded into pkgs_dir, and hashed. Unreachable archives are an
    OperationalError naming the package; mismatches are returned. Without a pkgs_dir only file:// archives can
    be found."""
    wanted = [p for p in packages if p.manager == "conda" or has_archive(p)]
    memo = DigestMemo()  # an archive hashed before and unchanged since (stat signature) is not read again

    def one(package: Package, remembered_only: bool = False) -> Archive | None:
        archive = _one(package, pkgs_dir, memo, remembered_only=remembered_only)
        return archive if done is None or archive is None else _reported(archive, done)

    try:
        # First, in this thread, what the memo already knows (a stat and a lookup each: threads would only
        # contend for the GIL); then the archives that must be read or downloaded, on the pool.
        found = [one(p, remembered_only=True) for p in wanted]
        todo = [i for i, archive in enumerate(found) if archive is None]
        if len(todo) == 1:
            found[todo[0]] = one(wanted[todo[0]])
        elif todo:
            # a few long-lived batches instead of one task per package: hundreds of small archives hash in
            # milliseconds
            batches = [todo[i::workers] for i in range(min(workers, len(todo)))]
            with ThreadPoolExecutor(max_workers=len(batches)) as pool:
                for batch in pool.map(lambda batch: [(i, one(wanted[i])) for i in batch], batches):
                    for i, archive in batch:
                        found[i] = archive
        return [archive for archive in found if archive is not None]
    finally:
        memo.save()


def _reported(archive: Archive, done: Callable[[Package], None]) -> Archive:
    """Tell a progress bar one more archive is located and hashed."""
    done(archive.package)
    return archive


def has_archive(package: Package) -> bool:
    """A pip package locked with a downloadable file (wheel or sdist) and a hash."""
    return bool(package.filename.endswith(PIP_ARCHIVES) and (package.sha256 or package.md5))


def _one(
    package: Package, pkgs_dir: Path | None, memo: DigestMemo, *, remembered_only: bool = False
) -> Archive | None:
    """The package's archive, located (or downloaded) and hashed; with `remembered_only`, only an archive
    already on disk whose digest the memo holds (else None: nothing is read or downloaded)."""
    if package.sha256:
        algorithm, expected = "sha256", package.sha256.lower()
    elif package.md5:
        algorithm, expected = "md5", package.md5.lower()
    else:
        raise BadInputError(  # the lock is incomplete: bad input (exit 2), not an operational failure
            f"{package.describe()}: the lock has no sha256 or md5 for it, so it cannot be "
            "verified; re-create the lock"
        )
    path = locate(package, pkgs_dir, checked=not remembered_only)  # the memo's stat finds a missing file
    if path is None:
        if remembered_only:
            return None
        if pkgs_dir is None:
            raise OperationalError(f"{package.describe()}: not a local archive ({package.url})")
        path = download(package, pkgs_dir)
    try:
        actual = memo.known(path, algorithm) if remembered_only else memo.digest(path, algorithm)
    except OSError as exc:
        raise OperationalError(
            f"{package.describe()}: cannot read {path} ({exc.strerror}); check permissions"
        ) from exc
    if actual is None:
        return None
    if actual == expected and pkgs_dir is not None and path.parent != pkgs_dir:
        keep(path, pkgs_dir)  # a file:// channel: the cache alone serves an offline rerun
    return Archive(package, path, algorithm, expected, actual)


def keep(path: Path, pkgs_dir: Path) -> None:
    """Put a verified archive from a local channel into the package cache (a hard link where the file system
    allows, else a copy; temp file then rename). Best effort: a cache that cannot take it changes nothing."""
    import shutil

    target = child(pkgs_dir, path.name)
    if target.exists():
        return
    with contextlib.suppress(OSError):
        pkgs_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=pkgs_dir)
        os.close(fd)
        try:
            os.unlink(tmp)
            try:
                os.link(path, tmp)
            except OSError:
                shutil.copyfile(path, tmp)
            os.replace(tmp, target)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)


def locate(package: Package, pkgs_dir: Path | None, *, checked: bool = True) -> Path | None:
    """An archive already on this machine: the package cache first, then a file:// channel. Unless
    `checked` is False, a file:// archive that does not exist is an OperationalError naming the package
    (unchecked, the caller's own stat of the path must find it missing)."""
    name = package.filename
    if name and pkgs_dir is not None:
        cached = child(pkgs_dir, name)
        if cached.is_file():
            return cached
    path = local_path(package.url)
    if path is not None:
        if checked and not path.is_file():
            raise OperationalError(
                f"{package.describe()}: {path} does not exist; the local channel moved or the lock is stale"
            )
        return path
    return None


def download(package: Package, pkgs_dir: Path, timeout: float = DOWNLOAD_TIMEOUT) -> Path:
    """Download the archive into pkgs_dir (temp file, then rename) and return its path."""
    import urllib.error
    import urllib.request

    url = strip_credentials(package.url)
    if not url or not package.filename:
        raise OperationalError(
            f"{package.describe()}: no URL in the lock to fetch it from; re-create the lock"
        )
    target = child(pkgs_dir, package.filename)
    try:
        pkgs_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=pkgs_dir)
        request = authorized(url)  # the credential travels only in the request, never in a message
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(request, timeout=timeout) as response:
            while chunk := response.read(_CHUNK):
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
    except (OSError, urllib.error.URLError) as exc:
        with contextlib.suppress(OSError, UnboundLocalError):
            os.unlink(tmp)
        reason = getattr(exc, "reason", None) or getattr(exc, "strerror", None) or exc
        raise OperationalError(
            f"{package.describe()}: cannot download {url} ({reason}); check the network, or put "
            f"{package.filename} in the package cache {pkgs_dir} to work offline"
        ) from exc
    return target


def authorized(url: str) -> Any:
    """A request for `url` carrying its host's credential (envguard.channels.credential_for) as rattler would
    send it: a conda token as the path's `/t/<TOKEN>` prefix, a user and password as basic auth."""
    import base64
    import urllib.parse
    import urllib.request

    credential = credential_for(url)
    alias = None if credential is not None else channel_alias()
    if alias is not None:  # a token in the condarc's channel_alias, for a lock written through it
        remember(alias)
        credential = credential_for(url)
    if credential is None:
        return urllib.request.Request(url)
    if credential.token:
        parts = urllib.parse.urlsplit(url)
        tokened = parts._replace(path=f"/t/{credential.token}{parts.path}")
        return urllib.request.Request(urllib.parse.urlunsplit(tokened))
    basic = base64.b64encode(f"{credential.username}:{credential.password}".encode()).decode()
    return urllib.request.Request(url, headers={"Authorization": f"Basic {basic}"})


def records(archives: Sequence[Archive]) -> list[Any]:
    """rattler RepoDataRecords of the verified archives, from their own index.json (noarch, depends...), with
    the lock's channel; remote packages point at their local copy so nothing is fetched twice.

    An archive's index.json is read from the archive once and then remembered by the archive's sha256
    (`index_memo_folder`): the bytes behind a verified sha256 never change, so the next rebuild of the same
    lock builds its records from the memo instead of reading (and hashing) every archive again. It is
    remembered only when rattler's own sha256 of what it read is the verified one."""
    import asyncio

    import rattler

    async def read_one(archive: Archive) -> Any:
        try:
            record = await rattler.RepoDataRecord.from_package_archive(archive.path)
        except Exception as exc:  # rattler's own error types: the file is not a conda package
            reason = first_line(exc, 120)
            raise BadInputError(
                f"{archive.package.describe()}: {archive.path} matches the lock's {archive.algorithm} but is "
                f"not a readable conda package ({reason}); the lock points at the wrong file; re-create it"
            ) from exc
        found = _identity(record)
        package = archive.package
        if found != (package.name, package.version, package.build):
            raise BadInputError(
                f"{package.describe()}: its archive {archive.path.name} is {' '.join(found)} (its "
                "info/index.json), not the package the lock names; the lock was edited or points at the "
                "wrong file: re-create it; nothing was installed"
            )
        return record

    async def read_all(todo: list[Archive]) -> list[Any]:
        return list(await asyncio.gather(*(read_one(a) for a in todo)))

    memo = index_memo_folder()
    where = [_record_location(archive) for archive in archives]
    result: list[Any] = [_remembered_record(a, memo, at) for a, at in zip(archives, where, strict=True)]
    todo = [i for i, record in enumerate(result) if record is None]
    if todo:
        for i, record in zip(todo, asyncio.run(read_all([archives[i] for i in todo])), strict=True):
            record.url, record.channel = where[i]
            result[i] = record
            _remember_record(archives[i], record, memo)
    for archive, record in zip(archives, result, strict=True):
        if archive.package.md5 and not record.md5:
            record.md5 = bytes.fromhex(archive.package.md5)
    return result


def _identity(record: Any) -> tuple[str, str, str]:
    """(name, version, build) of a rattler record, as a lock writes them."""
    return record.name.normalized, str(record.version), str(record.build)


def index_memo_folder() -> str:
    """Where the index.json of each verified archive is remembered, as `<sha256>.json` (per rattler version:
    its record format)."""
    import rattler

    return os.path.join(cache_path(), "index", str(getattr(rattler, "__version__", "0")))


def _record_location(archive: Archive) -> tuple[str, str]:
    """The record's url (a local file's own, else the local copy's) and channel (the lock's URL less
    subdir and file name)."""
    url = archive.package.url
    local = url if url.startswith("file:") else archive.local_url
    return local, url.rsplit("/", 2)[0] + "/" if url.count("/") >= 3 else archive.package.channel


def _remembered_record(archive: Archive, memo: str, where: tuple[str, str]) -> Any:
    """The archive's RepoDataRecord from the index memo, or None (not remembered, unreadable, or not the
    package the lock names)."""
    if archive.algorithm != "sha256" or not archive.verified:
        return None
    import rattler

    package, path = archive.package, archive.path
    try:
        # a str, as rattler's own docstring passes one (its stub says os.PathLike): a new Path per package
        # adds 3-6 ms to a 300-package lock, a third of building its records
        record = rattler.PackageRecord.from_index_json(
            os.path.join(memo, archive.actual + ".json"),  # type: ignore[arg-type]
            size=os.stat(path).st_size,
            sha256=archive.actual,
        )
        if _identity(record) != (package.name, package.version, package.build):
            return None
        return rattler.RepoDataRecord(record, path.name, *where)
    except Exception:  # no memo yet, or one that rattler cannot read: the archive is read instead
        return None


def _remember_record(archive: Archive, record: Any, memo: str) -> None:
    """Remember the index.json rattler read from a verified archive, if what it read hashes to the verified
    sha256 (an archive swapped after it was hashed is never remembered). Best effort."""
    import json

    if archive.algorithm != "sha256" or not archive.verified:
        return
    sha256 = record.sha256
    if not isinstance(sha256, bytes) or sha256.hex() != archive.actual:
        return
    try:
        index = json.loads(record.to_json())
        for where in ("fn", "url", "channel", "sha256", "md5", "size"):  # the archive's place and digests
            index.pop(where, None)
        path = os.path.join(memo, f"{archive.actual}.json")
        write_bytes(path, json.dumps(index).encode(), durable=False, private=True)
    except (EnvguardError, OSError, ValueError):
        return


def restore_urls(prefix: Path, archives: Sequence[Archive]) -> None:
    """Point conda-meta records of remote packages back at the lock's (credential-free) URL after an install
    from the local copies."""
    import json

    for archive in archives:
        package = archive.package
        if local_path(package.url) is not None:
            continue
        path = child(prefix / "conda-meta", f"{package.name}-{package.version}-{package.build}.json")
        try:
            data = json.loads(path.read_bytes())
        except (OSError, ValueError):
            continue
        data["url"] = strip_credentials(package.url)
        write_text(path, json.dumps(data, indent=2) + "\n")
