"""Every file envguard reads, as bytes mutations of real samples (issue 42): environment.yml, conda-lock.yml,
pixi.lock and explicit files (the shared corpus, read in place, where present; a built-in sample always),
conda-meta records and history, a pyproject.toml's `[tool.envguard]`, a DSSE attestation, a smoke recording.
Each is read by what reads it (a command in-process, or the attestation's and recording's loaders) and ends
in a result or one line with exit 0-3, never exit 4 or another exception.

Mutations: bytes flipped, inserted (among them the pieces that broke readers before: NUL, a stray UTF-8 lead
byte, YAML anchors and tags, deep brackets, huge numbers), deleted, duplicated, the file cut short."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

from envguard.attest import envelope
from envguard.attest.statement import PAYLOAD_TYPE
from envguard.errors import EnvguardError
from envguard.smoke import recordfile
from tests.fuzz.strategies import LOCK_DATA, RECORD
from tests.helpers import SHARED, envguard, openssl_keys

CORPUS = SHARED / "corpus"
EXAMPLES = settings.default.max_examples // 2  # 60 in the `fuzz` profile, 1,500 in `fuzz-long`
PIECES = [
    b"\x00",
    b"\xff",
    b"\xc3",
    b"\xef\xbb\xbf",
    b"\n",
    b"\r",
    b"\t",
    b" ",
    b"- ",
    b": ",
    b"::",
    b"&a ",
    b"*a",
    b"!!python/object:os.system ",
    b"!!binary ",
    b"{",
    b"[" * 64,
    b'"',
    b"'",
    b"#",
    b"=",
    b"9" * 400,
    b"-1",
    b"1e999",
    b"NaN",
    b"null",
    b"@EXPLICIT\n",
    b"https://",
    b"../",
    b"\\u0000",
    b"\x1b[2J",
]
OPS = st.lists(
    st.tuples(
        st.sampled_from(["flip", "insert", "delete", "duplicate", "cut"]),
        st.integers(min_value=0, max_value=2**32),
        st.integers(min_value=1, max_value=64),
        st.sampled_from(PIECES) | st.binary(min_size=1, max_size=8),
    ),
    min_size=1,
    max_size=6,
)


def mutated(data: bytes, ops: list[tuple[str, int, int, bytes]]) -> bytes:
    """`data` after each operation, at its position modulo the length."""
    for op, where, size, piece in ops:
        at = where % (len(data) + 1)
        if op == "flip" and data:
            at %= len(data)
            data = data[:at] + bytes([data[at] ^ (piece[0] or 0x80)]) + data[at + 1 :]
        elif op == "insert":
            data = data[:at] + piece + data[at:]
        elif op == "delete":
            data = data[:at] + data[at + size :]
        elif op == "duplicate":
            data = data[:at] + data[at : at + size] * 2 + data[at + size :]
        elif op == "cut":
            data = data[:at]
    return data


ENVYML = b"""name: fuzz
channels:
  - conda-forge
dependencies:
  - python=3.11
  - numpy>=1.26,<2
  - pytorch::pytorch=2.3
  - pip
  - pip:
      - requests==2.31.0
      - --extra-index-url https://download.pytorch.org/whl/cu121
"""
EXPLICIT = (
    b"""# platform: linux-64
@EXPLICIT
https://conda.anaconda.org/conda-forge/linux-64/zlib-1.3.1-h0_0.conda#00000000000000000000000000000000
https://conda.anaconda.org/conda-forge/noarch/six-1.16.0-pyh6c4a22f_0.tar.bz2#sha256:"""
    + (b"a" * 64)
    + b"\n"
)
PYPROJECT = b"""[project]
name = "fuzz"
version = "0.1"

[tool.envguard]
lock = "conda-lock.yml"
environment = "env"
"""
HISTORY = b"""==> 2024-01-01 00:00:00 <==
# cmd: conda create -n x zlib
# conda version: 24.1.0
+conda-forge/linux-64::zlib-1.3.1-h0_0
# update specs: ["zlib"]
"""


def _samples(kind: str, builtin: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    """The built-in samples, then the corpus's files of `kind` (read in place), when the corpus is here."""
    folder = CORPUS / kind
    found = sorted(folder.iterdir()) if folder.is_dir() else []
    return builtin + [(p.name, p.read_bytes()) for p in found if p.is_file()]


def _lock_yaml() -> bytes:
    import yaml

    return yaml.safe_dump(LOCK_DATA).encode()


TEXT_KINDS = {
    "env_yml": _samples("env_yml", [("environment.yml", ENVYML)]),
    "conda_lock": _samples("conda_lock", [("conda-lock.yml", _lock_yaml())]),
    "pixi_lock": _samples("pixi_lock", []),
    "explicit": _samples("explicit", [("explicit.txt", EXPLICIT)]),
}
RECORDS = _samples("conda_meta", [("zlib-1.3.1-h0_0.json", json.dumps(RECORD).encode())])


def _ok(code: int, capfd: Any, what: str) -> None:
    err = capfd.readouterr().err
    assert code in (0, 1, 2, 3), f"{what}: exit {code}\n{err[:2000]}"
    assert "Traceback" not in err and "internal error" not in err, f"{what}\n{err[:2000]}"


def _loaded(call: Any, *args: Any) -> None:
    try:
        call(*args)
    except EnvguardError as exc:
        assert exc.exit_code in (1, 2, 3), exc
        assert "\n" not in str(exc).strip(), f"one line: {exc}"


def _write(folder: Path, name: str, data: bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("kind", sorted(TEXT_KINDS))
def test_lock_and_environment_files(kind: str, tmp_path_factory, capfd) -> None:
    samples = TEXT_KINDS[kind]
    if not samples:
        pytest.skip(f"no {kind} sample here (the shared corpus is absent)")

    @seed(42)
    @settings(max_examples=EXAMPLES, database=None)
    @given(st.sampled_from(samples), OPS)
    def fuzz(sample: tuple[str, bytes], ops: list[tuple[str, int, int, bytes]]) -> None:
        name, data = sample
        path = _write(tmp_path_factory.mktemp(kind), name, mutated(data, ops))
        capfd.readouterr()
        _ok(envguard("diff", str(path), str(path), "--json"), capfd, f"diff {name} {ops}")
        if kind in ("conda_lock", "pixi_lock"):
            code = envguard("export", str(path), "--format", "cyclonedx", "-o", str(path.with_suffix(".cdx")))
            _ok(code, capfd, f"export {name} {ops}")

    fuzz()


def test_conda_meta_records_and_history(tmp_path_factory, capfd) -> None:
    @seed(42)
    @settings(max_examples=EXAMPLES, database=None)
    @given(st.sampled_from(RECORDS), OPS, OPS)
    def fuzz(sample: tuple[str, bytes], ops: list[Any], history_ops: list[Any]) -> None:
        name, data = sample
        prefix = tmp_path_factory.mktemp("env")
        record = name if name.endswith(".json") else "x-1-0.json"
        _write(prefix / "conda-meta", record, mutated(data, ops))
        _write(prefix / "conda-meta", "history", mutated(HISTORY, history_ops))
        capfd.readouterr()
        _ok(envguard("snapshot", str(prefix), "--no-probe"), capfd, f"snapshot {name} {ops}")
        code = envguard("export", str(prefix), "--format", "cyclonedx", "-o", str(prefix / "sbom.json"))
        _ok(code, capfd, f"export {name} {ops}")

    fuzz()


def test_pyproject_tool_envguard(tmp_path_factory, capfd) -> None:
    @seed(42)
    @settings(max_examples=EXAMPLES, database=None)
    @given(OPS)
    def fuzz(ops: list[Any]) -> None:
        project = tmp_path_factory.mktemp("project")
        _write(project, "pyproject.toml", mutated(PYPROJECT, ops))
        capfd.readouterr()
        _ok(envguard("check", cwd=project), capfd, f"check {ops}")
        _ok(envguard("snapshot", "--no-probe", cwd=project), capfd, f"snapshot {ops}")

    fuzz()


@pytest.fixture(scope="module")
def attestation(tmp_path_factory) -> tuple[bytes, Path]:
    """(a signed DSSE envelope's bytes, the public key that verifies it)."""
    private, public = openssl_keys(tmp_path_factory.mktemp("keys"))
    payload = json.dumps({"_type": "https://in-toto.io/Statement/v1", "subject": []}).encode()
    sealed = envelope.seal(
        payload, PAYLOAD_TYPE, envelope.Signing("key", private), envelope.load_signer(private)
    )
    return sealed, public


def test_attestations(attestation: tuple[bytes, Path], tmp_path_factory) -> None:
    sealed, public = attestation
    document = json.loads(sealed)
    raw = base64.b64decode(document["payload"])  # the payload's own bytes mutated too, re-encoded

    @seed(42)
    @settings(max_examples=EXAMPLES, database=None)
    @given(OPS, st.booleans())
    def fuzz(ops: list[Any], inner: bool) -> None:
        if inner:
            data = json.dumps({**document, "payload": base64.b64encode(mutated(raw, ops)).decode()}).encode()
        else:
            data = mutated(sealed, ops)
        path = _write(tmp_path_factory.mktemp("att"), "env.intoto.json", data)
        _loaded(envelope.open_envelope, path, public, None, None)

    fuzz()


RECORDING = json.dumps(
    {
        "kind": recordfile.KIND,
        "version": recordfile.VERSION,
        "written_by": "envguard smoke --record",
        "reproduce": "envguard smoke --record r.json",
        "dataset": "mnist",
        "seed": 0,
        "batch_size": 2,
        "batches": 1,
        "fingerprints": {"python": "3.11.7", "numpy_version": "1.26.4", "torch_randperm": "ab12"},
        "samples": [{"index": "0", "fields": {"x": "d41d8cd9"}}, {"index": "1", "fields": {"x": "00ff"}}],
    },
    indent=1,
    sort_keys=True,
).encode()


def test_smoke_recordings(tmp_path_factory) -> None:
    path = tmp_path_factory.mktemp("rec") / "r.json"
    path.write_bytes(RECORDING)
    recordfile.load(path)  # the template reads, so a mutation is what fails

    @seed(42)
    @settings(max_examples=EXAMPLES, database=None)
    @given(OPS)
    def fuzz(ops: list[Any]) -> None:
        path.write_bytes(mutated(RECORDING, ops))
        _loaded(recordfile.load, path)

    fuzz()
