"""Where each pip package of a live environment came from: the wheel file on pip's configured find-links and
indexes (the environment's own pip.conf, the user's and global ones, PIP_* variables) whose name, version and
tags are the installed distribution's, with its sha256 (the index's `#sha256=`, or the local file's), and
the index it is on. pip and uv record neither for an index install; the lock then installs exactly that file
again, hash-checked, with no index configured.

Reads index pages (PEP 503 HTML or PEP 691 JSON), never downloads a wheel. Credentials from pip's
configuration are used to read a page and never written: every URL recorded goes through the one scrubber.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import os
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote, unquote, urljoin, urlsplit, urlunsplit

from envguard.channels import scrub, strip_credentials
from envguard.model import Environment, Package
from envguard.prefix import pipconfig
from envguard.prefix.pip_dist import wheel_tags
from envguard.specs import canonical_name

PYPI = "https://pypi.org/simple"
_TIMEOUT = 15.0
_ACCEPT = "application/vnd.pypi.simple.v1+json, text/html;q=0.1"


@dataclass(frozen=True)
class Found:
    """A wheel file on a find-links location or index: its URL, sha256 (hex, '' when the index gives none)
    and where it was listed (the index or find-links location, credentials kept: scrub before writing)."""

    url: str
    sha256: str
    where: str


def locations(prefix: Path) -> list[str]:
    """pip's configured find-links locations, extra indexes, then its index (PyPI unless configured)."""
    values = pipconfig.settings(prefix)
    return [*values["find-links"], *values["extra-index-url"], *(values["index-url"][:1] or [PYPI])]


def locate(env: Environment, prefix: Path) -> tuple[Environment, list[str]]:
    """The environment with each pip package pip installed from an index (no file URL known) given the URL
    and sha256 of its wheel and the index it is on (`channel`), where a configured location lists it; and
    warnings for locations that could not be read."""
    wanted = [p for p in env.pip_packages() if not p.url and p.origin is None]
    if not wanted:
        return env, []
    tags = wheel_tags(prefix)
    places = locations(prefix)
    warnings: list[str] = []
    queries = [(p, tags.get(p.name, ("", frozenset()))[1]) for p in wanted]
    queries = [(p, t) for p, t in queries if t]
    with ThreadPoolExecutor(max_workers=min(16, max(1, len(queries)))) as pool:
        answers = list(pool.map(lambda q: _find(q[0], q[1], places, warnings), queries))
    found = {p.name: answer for (p, _t), answer in zip(queries, answers, strict=True) if answer is not None}
    packages = tuple(
        dataclasses.replace(
            p,
            url=strip_credentials(found[p.name].url),
            sha256=found[p.name].sha256,
            channel=scrub(found[p.name].where),
        )
        if p.manager == "pip" and p.name in found
        else p
        for p in env.packages
    )
    return dataclasses.replace(env, packages=packages), sorted(set(warnings))


def _find(package: Package, tags: frozenset[str], places: Sequence[str], warnings: list[str]) -> Found | None:
    for place in places:
        try:
            files = _listing(place, package.name)
        except OSError as exc:
            warnings.append(
                f"pip location {scrub(place)}: not read ({_reason(exc)}); its wheels are not locked"
            )
            continue
        for filename, url, sha256 in files:
            if _matches(filename, package, tags):
                if not sha256 and url.startswith("file:"):
                    sha256 = _file_sha256(Path(unquote(urlsplit(url).path)))
                if sha256:  # the file name plain in the URL (`+cpu`, not `%2Bcpu`): the lock's entry names it
                    return Found(f"{url.rsplit('/', 1)[0]}/{quote(filename, safe='+')}", sha256, place)
    return None


def _reason(exc: OSError) -> str:
    return str(getattr(exc, "reason", None) or exc.strerror or exc)


def _matches(filename: str, package: Package, tags: frozenset[str]) -> bool:
    """A wheel of this name and version built for exactly the installed tags."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename
    from packaging.version import InvalidVersion, Version

    if not filename.endswith(".whl"):
        return False
    try:
        name, version, _build, file_tags = parse_wheel_filename(filename)
        same = name == canonical_name(package.name) and version == Version(package.version)
    except (InvalidWheelFilename, InvalidVersion):
        return False
    return same and {str(t) for t in file_tags} == set(tags)


def _listing(place: str, name: str) -> list[tuple[str, str, str]]:
    """(filename, absolute URL, sha256 or '') for the files a find-links location or an index lists for
    `name`. A local folder (or file:// folder) is listed; an index's project page is read."""
    if "://" not in place or place.startswith("file:"):
        folder = Path(unquote(urlsplit(place).path)) if place.startswith("file:") else Path(place)
        if folder.is_dir() and not (folder / name).is_dir() and not (folder / "index.html").is_file():
            return [(f.name, f.resolve().as_uri(), "") for f in sorted(folder.iterdir()) if f.is_file()]
        page = folder / name / "index.html"
        if not page.is_file():
            return []
        return _parse(page.read_text(encoding="utf-8", errors="replace"), "text/html", page.as_uri())
    url = place.rstrip("/") + f"/{name}/"
    text, kind, final = _get(url)
    return _parse(text, kind, final)


def _get(url: str) -> tuple[str, str, str]:
    """The page's text, content type and URL (credentials in the URL sent as basic auth, not in the URL)."""
    parts = urlsplit(url)
    headers = {"Accept": _ACCEPT}
    if parts.username is not None:
        secret = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        headers["Authorization"] = "Basic " + base64.b64encode(secret.encode()).decode()
        netloc = parts.hostname or ""
        netloc += f":{parts.port}" if parts.port else ""
        url = urlunsplit(parts._replace(netloc=netloc))
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=_TIMEOUT) as response:
            body = response.read().decode("utf-8", "replace")
            return body, response.headers.get_content_type(), response.geturl()
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return "", "text/html", url
        raise OSError(f"HTTP {exc.code}") from exc


def _parse(text: str, kind: str, base: str) -> list[tuple[str, str, str]]:
    if not text:
        return []
    if kind.endswith("json"):
        data = json.loads(text)
        files = data.get("files", []) if isinstance(data, dict) else []
        return [
            (str(f["filename"]), urljoin(base, str(f["url"])), str((f.get("hashes") or {}).get("sha256", "")))
            for f in files
            if isinstance(f, dict) and "filename" in f and "url" in f
        ]
    parser = _Anchors()
    parser.feed(text)
    result = []
    for href, label in parser.links:
        url, _, fragment = urljoin(base, href).partition("#")
        algorithm, _, digest = fragment.partition("=")
        filename = unquote(url.rsplit("/", 1)[-1]) or label
        result.append((filename, url, digest.lower() if algorithm == "sha256" else ""))
    return result


class _Anchors(HTMLParser):
    """The `<a href>` links of a PEP 503 page, with their text."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str]] = []
        self._href: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._href = dict(attrs).get("href")

    def handle_data(self, data: str) -> None:
        if self._href is not None:
            self.links.append((self._href, data.strip()))
            self._href = None


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    except OSError:
        return ""
    return digest.hexdigest()


def enabled() -> bool:
    """`ENVGUARD_PIP_LOOKUP=0` turns the look-up off (the lock then records name==version, as pip did)."""
    return os.environ.get("ENVGUARD_PIP_LOOKUP", "1") != "0"
