"""Every reader under hostile input: a result or one bad-input error (exit 2), never another exception.

The default run is bounded (the `fuzz` profile, a few seconds per parser); `-m slow` runs the long profile."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from envguard import textio
from envguard.channels import normalize, strip_credentials
from envguard.errors import EXIT_BAD_INPUT, EnvguardError
from envguard.formats import envyml, explicit
from envguard.formats.condalock import meta as lockmeta
from envguard.formats.condalock.read import parse_lock
from envguard.model import from_dict, make_environment, to_dict
from envguard.prefix import history
from envguard.prefix.records import load_record, record_to_package
from envguard.textio import decode
from tests.fuzz.strategies import JSON, LINE, LOCK_DATA, LOCK_PATHS, RECORD, TEXT, as_json, mutate


def _bad_input_or_ok(call: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return call(*args, **kwargs)
    except EnvguardError as exc:
        assert exc.exit_code == EXIT_BAD_INPUT, f"{type(exc).__name__}: {exc}"
        assert "\n" not in str(exc).strip(), "one line"
        return None


@given(LOCK_PATHS, JSON)
def test_conda_lock_fields_of_any_type(path, value) -> None:
    text = yaml.safe_dump(mutate(LOCK_DATA, path, value), allow_unicode=True)
    _bad_input_or_ok(parse_lock, text, "conda-lock.yml")


@given(TEXT)
def test_conda_lock_text(text) -> None:
    _bad_input_or_ok(parse_lock, "version: 1\n" + text, "conda-lock.yml")


@given(st.lists(LINE, max_size=10))
def test_explicit_lines(lines) -> None:
    _bad_input_or_ok(explicit.parse_explicit_text, "@EXPLICIT\n" + "\n".join(lines), "spec.txt")


@given(st.dictionaries(st.sampled_from(["name", "channels", "dependencies", "prefix", "variables"]), JSON))
def test_environment_yml_structure(data) -> None:
    _bad_input_or_ok(envyml.parse, yaml.safe_dump(data, allow_unicode=True), "environment.yml")


@given(st.lists(LINE | st.builds(lambda x: {"pip": x}, st.lists(LINE, max_size=4)), max_size=8), TEXT)
def test_environment_yml_dependencies(deps, tail) -> None:
    text = yaml.safe_dump({"name": "x", "dependencies": deps}, allow_unicode=True) + tail
    _bad_input_or_ok(envyml.parse, text, "environment.yml")


SNAPSHOT = to_dict(make_environment(kind="prefix", source="/p", packages=()))
SNAPSHOT_KEYS = st.sampled_from([*SNAPSHOT, "packages", "requested", "virtual_packages"])


@given(
    SNAPSHOT_KEYS,
    JSON,
    st.lists(
        st.dictionaries(
            st.sampled_from(["name", "version", "manager", "origin", "depends", "build_number"]), JSON
        )
    ),
)
def test_snapshot_fields_of_any_type(key, value, packages) -> None:
    data = {**SNAPSHOT, key: value}
    if key != "packages":
        data["packages"] = packages
    _bad_input_or_ok(from_dict, data, "snap.json")


@given(st.sampled_from([*RECORD, "size", "constrains", "requested_spec", "link", "fn"]), JSON)
def test_conda_meta_record_fields_of_any_type(tmp_path_factory, key, value) -> None:
    path = tmp_path_factory.mktemp("rec") / "zlib-1.3.1-h0_0.json"
    path.write_text(json.dumps({**RECORD, key: value}))
    record = _bad_input_or_ok(load_record, path)
    if record is not None:
        package = record_to_package(record)
        assert isinstance(package.build_number, int) and all(isinstance(d, str) for d in package.depends)


@given(TEXT, st.integers(min_value=0, max_value=200_000))
def test_history(text, long) -> None:
    revisions = history.parse(text + "\n# update specs: [" + "x" * long + "\n" + text)
    history.requested_specs(revisions)


CUSTOM_KEYS = st.sampled_from(
    [
        lockmeta.platform_key("linux-64", f)
        for f in (lockmeta.FIELD_VIRTUAL, lockmeta.FIELD_FINGERPRINTS, lockmeta.FIELD_PIP_ORIGINS)
    ]
)


@given(CUSTOM_KEYS, TEXT | JSON.map(as_json))
def test_lock_custom_metadata_text(key, text) -> None:
    data = mutate(LOCK_DATA, ["metadata", "custom_metadata", key], text)
    _bad_input_or_ok(parse_lock, yaml.safe_dump(data, allow_unicode=True), "conda-lock.yml")


@given(st.binary(max_size=300), st.booleans())
def test_decode(data, partial) -> None:
    _bad_input_or_ok(decode, data, "f", partial=partial)


@given(TEXT)
def test_yaml_loader_raises_only_yaml_errors(text) -> None:
    with contextlib.suppress(yaml.YAMLError):
        textio.load_yaml(text)


@given(LINE)
def test_channel_helpers(text) -> None:
    assert isinstance(strip_credentials(text), str) and isinstance(normalize(text), str)


@pytest.mark.slow
@settings(max_examples=2000)
@given(LOCK_PATHS, JSON)
def test_conda_lock_fields_long(path, value) -> None:
    test_conda_lock_fields_of_any_type.hypothesis.inner_test(path, value)  # type: ignore[attr-defined]


def test_the_fixtures_are_valid(tmp_path: Path) -> None:
    """The templates parse cleanly, so a mutation is what fails, not the template."""
    parse_lock(yaml.safe_dump(LOCK_DATA), "conda-lock.yml")
    path = tmp_path / "zlib-1.3.1-h0_0.json"
    path.write_text(json.dumps(RECORD))
    assert record_to_package(load_record(path)).name == "zlib"
