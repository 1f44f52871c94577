"""The parse cache: a lock read again unchanged is served from its remembered parse (equal to parsing it),
any byte changed is a miss, a damaged entry is a miss, and a file holding a credential is never written
to the cache."""

from __future__ import annotations

from pathlib import Path

from envguard.cache import parsed as parsecache
from envguard.check.run import parse_target
from tests.helpers import zlib_lock

TOKEN = "tk-0123456789abcdef0123456789abcdef"


def _entries() -> list[Path]:
    folder = Path(parsecache._path(b"", "", "")).parent
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def test_an_unchanged_lock_is_served_from_its_remembered_parse(channels, tmp_path, monkeypatch) -> None:
    lock = zlib_lock(tmp_path / "proj", channels["forge"])  # locking it remembered its environment.yml
    before = _entries()
    first = parse_target(lock, "linux-64")
    assert len(_entries()) == len(before) + 1
    calls: list[Path] = []
    import envguard.check.run as check_run  # the parse check's target reader calls on a miss

    real = check_run.read_file
    monkeypatch.setattr(check_run, "read_file", lambda path, **kw: calls.append(path) or real(path, **kw))
    assert parse_target(lock, "linux-64") == first and calls == []  # from the cache, equal to the parse
    lock.write_text(lock.read_text() + "\n")  # one byte more: parsed again
    assert parse_target(lock, "linux-64") == first and calls == [lock]
    for entry in set(_entries()) - set(before):
        entry.write_text('{"schema_version": "nonsense"}')
    assert parse_target(lock, "linux-64") == first and calls == [lock, lock]  # damaged entries: a miss


def test_a_lock_with_a_token_is_never_written_to_the_cache(channels, tmp_path) -> None:
    lock = zlib_lock(tmp_path / "proj", channels["forge"])
    text = lock.read_text()
    url = next(line.split("url: ", 1)[1] for line in text.splitlines() if "url: file:" in line)
    secret = f"https://conda.anaconda.org/t/{TOKEN}/conda-forge/linux-64/{url.rsplit('/', 1)[1]}"
    lock.write_text(text.replace(url, secret))
    parse_target(lock, "linux-64")
    cache = Path(parsecache._path(b"", "", "")).parents[1]
    assert not any(TOKEN in p.read_text(errors="replace") for p in cache.rglob("*") if p.is_file())


def test_a_parse_holding_a_credential_is_not_stored() -> None:
    from envguard.model import RequestedSpec, make_environment

    env = make_environment(
        kind="environment.yml",
        source="environment.yml",
        channels=("conda-forge",),
        requested=(RequestedSpec("pip", "torch"),),
        pip_options=(f"--extra-index-url https://user:{TOKEN}@pypi.example.com/simple",),
    )
    parsecache.store(b"with a credential", "k", "environment.yml", env)
    assert _entries() == []
    clean = make_environment(kind="environment.yml", source="environment.yml", channels=("conda-forge",))
    parsecache.store(b"without", "k", "environment.yml", clean)
    assert len(_entries()) == 1 and parsecache.load(b"without", "k", "environment.yml") == clean


def test_the_same_bytes_at_another_path_quote_that_path(tmp_path) -> None:
    """A parse's messages name its file: two copies of one environment.yml each warn with their own path
    (the cache once served the first copy's warnings for the second)."""
    text = "name: x\nfoo: 1\ndependencies:\n  - python=3.11\n"
    first, second = tmp_path / "a" / "environment.yml", tmp_path / "b" / "environment.yml"
    for path in (first, second):
        path.parent.mkdir()
        path.write_text(text)
    assert any(str(first) in w for w in parse_target(first, "linux-64").warnings)
    warnings = parse_target(second, "linux-64").warnings
    assert warnings and all(str(first) not in w for w in warnings)
    assert any(str(second) in w for w in warnings)


def test_packages_read_back_equal_and_a_malformed_one_is_a_miss() -> None:
    """An entry keeps each package with its fields: read back equal (a pip origin too); a package with a field
    of the wrong type is a miss (parsed again), never a wrong Package."""
    import json

    from envguard.model import Package, PipOrigin, make_environment

    origin = PipOrigin("https://h/x.git", True, "git", "c" * 40, "main")
    env = make_environment(
        kind="conda-lock",
        source="conda-lock.yml",
        platform="linux-64",
        packages=(
            Package(
                "conda", "numpy", "1.26.4", "py311h0_0", 2, "conda-forge", "linux-64", depends=("python",)
            ),
            Package("pip", "x", "1.0", sha256="a" * 64, origin=origin),
        ),
    )
    parsecache.store(b"rows", "k", "conda-lock.yml", env)
    assert parsecache.load(b"rows", "k", "conda-lock.yml") == env
    (path,) = _entries()
    good = json.loads(path.read_text())
    assert [package["name"] for package in good["packages"]] == ["numpy", "x"]
    damages = {
        "no name": lambda package: {k: v for k, v in package.items() if k != "name"},
        "a name that is a number": lambda package: {**package, "name": 5},
        "a build number that is text": lambda package: {**package, "build_number": "2"},
        "depends as text": lambda package: {**package, "depends": "python"},
        "an unknown manager": lambda package: {**package, "manager": "npm"},
        "an origin field of the wrong type": lambda package: {**package, "origin": {"editable": "yes"}},
        "a control character": lambda package: {**package, "version": "1\x1b[2J"},
    }
    for what, damage in damages.items():
        document = json.loads(json.dumps(good))
        document["packages"] = [damage(package) for package in document["packages"]]
        path.write_text(json.dumps(document))
        assert parsecache.load(b"rows", "k", "conda-lock.yml") is None, what


def test_diff_of_a_lock_with_itself_parses_it_once(channels, tmp_path, monkeypatch) -> None:
    """diff and export read a conda-lock.yml through the parse cache: `diff L L` parses it once, and a later
    read of the same bytes not at all (a 100,000-package lock: ~4 s a parse)."""
    import envguard.sources as sources
    from envguard.diff.run import diff_sources

    lock = zlib_lock(tmp_path / "proj", channels["forge"])
    calls: list[Path] = []
    real = sources.read_file
    monkeypatch.setattr(sources, "read_file", lambda path, **kw: calls.append(path) or real(path, **kw))
    diff, _warnings = diff_sources(str(lock), str(lock), platform="linux-64", probe=False)
    assert diff.changes == () and calls == [lock]
    assert sources.load(str(lock), platform="linux-64") == real(lock, platform="linux-64") and calls == [lock]


def test_an_entry_is_named_by_the_digest_of_the_bytes_and_what_else_the_parse_depends_on() -> None:
    """The entry's name: sha256 of the file's bytes followed by the key, the name, the version and the format
    (hashed in two steps, the digest of the whole); a parse stored is found again by `load`."""
    import hashlib

    from envguard.version import __version__

    data = b"version: 1\n" * 1000
    tail = f"\0k\0a.yml\0{__version__}\0{parsecache.FORMAT}".encode()
    assert (
        Path(parsecache._path(data, "k", "a.yml")).name == hashlib.sha256(data + tail).hexdigest() + ".json"
    )
    assert parsecache._path(data, "k", "b.yml") != parsecache._path(data, "k", "a.yml")


def test_a_credential_is_found_in_the_bytes_as_in_the_text() -> None:
    """The quick test on the bytes of an ASCII file answers as scrub on its text does."""
    from envguard.channels import scrub
    from envguard.textio import decode

    for text in (
        "url: https://conda.anaconda.org/conda-forge\n",
        "url: https://user:secret@host/channel\n",
        "url: https://conda.anaconda.org/t/tk-123/conda-forge\n",
        "mail: a@b\nurl: https://h/x\n",
        "no url, but @ and /t/\n",
        "url: https://h/x\r\nuser: u@h\r\n",
    ):
        data = text.encode()
        assert parsecache._holds_credential(data) == (scrub(decode(data)) != decode(data)), text
