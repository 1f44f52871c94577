"""Explicit spec files: conda's own output, hash forms, encodings, credentials, line-numbered errors, a
property test."""

from __future__ import annotations

import hashlib
import string
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from envguard.errors import BadInputError
from envguard.formats import detect_kind, read_file
from envguard.formats.explicit import parse_explicit_text, read

REF = "reference/conda-outputs"


def test_reads_conda_list_explicit_md5_and_sha256(shared: Path) -> None:
    md5 = read(shared / REF / "list_explicit_md5_rattler.txt")
    sha = read(shared / REF / "list_explicit_sha256_rattler.txt")
    plain = read(shared / REF / "export_explicit_rattler.txt")
    assert md5.kind == "explicit" and md5.platform == "linux-64"
    assert [p.url for p in md5.packages] == [p.url for p in sha.packages] == [p.url for p in plain.packages]
    zlib = sha.get("zlib")
    assert zlib is not None
    assert (zlib.version, zlib.build, zlib.build_number, zlib.subdir) == (
        "1.3.1",
        "h4ab18f5_1",
        1,
        "linux-64",
    )
    assert zlib.channel == "file:///srv/channel" and sha.channels == ("file:///srv/channel",)
    # the same record as conda-meta saw it: both hashes agree with the recorded conda-meta file
    import json

    record = json.loads((shared / REF / "conda_meta_record_rattler_zlib.json").read_text())
    assert zlib.sha256 == record["sha256"]
    md5_zlib = md5.get("zlib")
    assert md5_zlib is not None and md5_zlib.md5 == record["md5"] and not md5_zlib.sha256
    assert all(not p.md5 and not p.sha256 for p in plain.packages)
    pytorch = sha.get("pytorch")
    assert pytorch is not None and pytorch.build == "cuda118_0" and pytorch.version == "2.1.0"


def test_hash_forms_crlf_bom_and_credentials(tmp_path: Path) -> None:
    digest = hashlib.sha256(b"x").hexdigest()
    md5 = hashlib.md5(b"y").hexdigest()
    text = (
        "# platform: osx-arm64\r\n@EXPLICIT\r\n"
        f"https://user:secret@conda.anaconda.org/t/tk-123/conda-forge/osx-arm64/libffi-3.4.2-h3422bc3_5.conda#sha256:{digest}\r\n"
        f"https://conda.anaconda.org/conda-forge/noarch/requests-2.28.2-pyhd8ed1ab_0.tar.bz2#{md5.upper()}\r\n"
        f"https://repo.anaconda.com/pkgs/main/osx-arm64/python-3.11.9-hb885b13_0.conda#{digest}\r\n"
    )
    path = tmp_path / "spec.txt"
    path.write_bytes(text.encode("utf-16"))
    assert detect_kind(path) == "explicit"
    env = read_file(path)
    assert env.platform == "osx-arm64" and env.python == "3.11.9"
    libffi, python, requests = env.packages
    assert libffi.sha256 == digest and libffi.channel == "conda-forge" and libffi.build_number == 5
    assert "secret" not in libffi.url and "tk-123" not in libffi.url
    assert libffi.url == "https://conda.anaconda.org/conda-forge/osx-arm64/libffi-3.4.2-h3422bc3_5.conda"
    assert requests.md5 == md5 and requests.subdir == "noarch" and requests.url.endswith(".tar.bz2")
    assert python.channel == "pkgs/main" and python.sha256 == digest
    assert env.channels == ("conda-forge", "pkgs/main")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("@EXPLICIT\nhttps://x.org/c/linux-64/zlib-1.3.1-0.conda#nothex\n", r"spec\.txt:2: bad hash"),
        (
            "# platform: linux-64\n@EXPLICIT\n\nnumpy=1.26\n",
            r"spec\.txt:4: 'numpy=1.26' is not a package URL",
        ),
        ("numpy=1.26\n@EXPLICIT\n", r"spec\.txt:1: .*before the @EXPLICIT line"),
        (
            "# platform: linux-64\nhttps://x.org/c/linux-64/zlib-1.3.1-0.conda\n",
            r"spec\.txt:2: package URL before any @EXPLICIT line",
        ),
        ("# only a comment\n", r"spec\.txt: no @EXPLICIT line"),
        ("@EXPLICIT\nhttps://x.org/c/linux-64/zlib.conda\n", r"spec\.txt:2: cannot read name-version-build"),
        ("@EXPLICIT\nhttps://u:pw@x.org/c/linux-64/zlib-1.3.1-0.zip\n", r"spec\.txt:2: 'https://x\.org/"),
    ],
)
def test_bad_lines_name_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "spec.txt"
    path.write_text(text)
    with pytest.raises(BadInputError, match=message) as info:
        read(path)
    assert "\n" not in str(info.value) and "pw" not in str(info.value)


def test_duplicates_warn_and_header_platform_wins(tmp_path: Path) -> None:
    text = (
        "# platform: linux-64\n# input_hash: abc\n@EXPLICIT\n"
        "https://x.org/c/linux-64/zlib-1.2.13-h0_5.conda\nhttps://x.org/c/linux-64/zlib-1.3.1-h1_1.conda\n"
    )
    env = parse_explicit_text(text, "dup.txt")
    assert [p.version for p in env.packages] == ["1.3.1"]
    assert env.warnings == ("dup.txt:5: zlib listed twice; the later URL wins",)


def test_corpus_lock_with_md5_and_mixed_archives(shared: Path) -> None:
    env = read(shared / "corpus/explicit/SciTools__iris__requirements_locks_py313-linux-64.lock")
    assert env.platform == "linux-64" and env.python is not None and env.python.startswith("3.13")
    assert all(len(p.md5) == 32 for p in env.packages)
    assert {p.url.rsplit(".", 1)[-1] for p in env.packages} == {"conda", "bz2"}


# --- property test
# ---------------------------------------------------------------------------------------------

_name = st.from_regex(r"\A[a-z0-9]{1,6}([_.][a-z0-9]{1,4}){0,2}\Z")  # conda's own rules (CEP 26)
_version = st.text(string.digits + ".", min_size=1, max_size=8).filter(lambda s: s[0].isdigit())
_build = st.text(string.ascii_lowercase + string.digits + "_", min_size=1, max_size=12)
_hex = st.text("0123456789abcdef", min_size=64, max_size=64)
_subdir = st.sampled_from(["linux-64", "noarch", "osx-arm64", "win-64"])
_hash_form = st.sampled_from(["", "md5", "sha256:", "sha256"])


@st.composite
def _entries(draw: st.DrawFn) -> list[tuple[str, str, str, str, str, str]]:
    names = draw(st.lists(_name, min_size=0, max_size=6, unique=True))
    out = []
    for name in names:
        version, build, subdir = draw(_version), draw(_build), draw(_subdir)
        ext = draw(st.sampled_from([".conda", ".tar.bz2"]))
        out.append((name, version, build, subdir, ext, draw(_hash_form) + "|" + draw(_hex)))
    return out


@given(_entries(), st.booleans(), st.booleans())
def test_property_written_specs_parse_back(
    entries: list[tuple[str, ...]], crlf: bool, comments: bool
) -> None:
    lines = ["# platform: linux-64", "@EXPLICIT"]
    for name, version, build, subdir, ext, hashed in entries:
        form, digest = hashed.split("|")
        url = f"https://USER:SECRET@conda.example.org/t/TOK/chan/{subdir}/{name}-{version}-{build}{ext}"
        suffix = {"": "", "md5": "#" + digest[:32], "sha256:": "#sha256:" + digest, "sha256": "#" + digest}[
            form
        ]
        lines.append(url + suffix)
        if comments:
            lines.append("# a comment between URLs")
    text = ("\r\n" if crlf else "\n").join(lines).replace("\r\n", "\n")
    env = parse_explicit_text(text, "gen.txt")
    got = {p.name: p for p in env.packages}
    assert set(got) == {e[0] for e in entries}
    for name, version, build, subdir, _ext, hashed in entries:
        form, digest = hashed.split("|")
        package = got[name]
        assert (package.version, package.build, package.subdir, package.channel) == (
            version,
            build,
            subdir,
            "https://conda.example.org/chan",
        )
        assert "SECRET" not in package.url and "TOK" not in package.url
        assert package.md5 == (digest[:32] if form == "md5" else "")
        assert package.sha256 == (digest if form.startswith("sha256") else "")


@given(st.text(max_size=200))
def test_property_arbitrary_lines_parse_or_fail_cleanly(line: str) -> None:
    try:
        parse_explicit_text("@EXPLICIT\n" + line + "\n", "fuzz.txt")
    except BadInputError as exc:
        assert str(exc).startswith("fuzz.txt") and "\n" not in str(exc)
