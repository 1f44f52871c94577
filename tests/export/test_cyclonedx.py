"""`envguard export --format cyclonedx`: the SBOM of a real environment (conda and pip packages) and of a
lock, validated by cyclonedx-python-lib's strict JSON validator; purls read back by packageurl-python."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import MakePrefix, envguard, pip_install, spec_lock


def validated(text: str) -> dict[str, Any]:
    """The SBOM, after CycloneDX's own strict validator accepted it (it fails the test otherwise)."""
    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator

    error = JsonStrictValidator(SchemaVersion.V1_6).validate_str(text)
    assert error is None, error
    data: dict[str, Any] = json.loads(text)
    return data


def by_name(sbom: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in sbom["components"]}


def sbom_of(source: str, capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, Any]:
    capsys.readouterr()
    assert envguard("export", source, "--format", "cyclonedx", *extra) == 0
    return validated(capsys.readouterr().out)


def test_environment_sbom_names_conda_and_pip_packages_by_purl(
    make_prefix: MakePrefix, channels: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    from packageurl import PackageURL

    prefix = make_prefix(["python=3.11", "numpy=1.26", "six", "pip"])
    pip_install(prefix, "--find-links", str(channels["wheels"]), "tinyproj==1.0.0")
    metadata = next(prefix.glob("lib/python3*/site-packages/tinyproj-1.0.0.dist-info/METADATA"))
    metadata.write_text(
        metadata.read_text().replace("Version: 1.0.0\n", "Version: 1.0.0\nLicense-Expression: MIT\n")
    )
    sbom = sbom_of(str(prefix), capsys)
    components = by_name(sbom)
    numpy = PackageURL.from_string(components["numpy"]["purl"])
    assert (numpy.type, numpy.name, numpy.version) == ("conda", "numpy", "1.26.4")
    assert numpy.qualifiers == {
        "build": "py311h64a7726_0",
        "channel": channels["forge"].resolve().as_uri(),
        "subdir": "linux-64",
        "type": "conda",
    }
    tinyproj = PackageURL.from_string(components["tinyproj"]["purl"])
    assert (tinyproj.type, tinyproj.name, tinyproj.version) == ("pypi", "tinyproj", "1.0.0")
    assert components["tinyproj"]["licenses"] == [{"expression": "MIT"}]
    assert components["numpy"]["licenses"] == [{"expression": "BSD-3-Clause"}]
    record = json.loads(next((prefix / "conda-meta").glob("numpy-*.json")).read_text())
    assert {"alg": "SHA-256", "content": record["sha256"]} in components["numpy"]["hashes"]
    graph = {d["ref"]: d["dependsOn"] for d in sbom["dependencies"]}
    assert components["python"]["purl"] in graph[components["numpy"]["purl"]]
    assert components["tinyproj"]["purl"] in graph["environment"]
    assert components["python"]["purl"] not in graph["environment"]  # numpy needs it: not top-level
    assert sbom["specVersion"] == "1.6" and sbom_of(str(prefix), capsys) == sbom  # deterministic


def test_lock_sbom_validates_and_options_that_do_not_apply_are_refused(
    channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = spec_lock(tmp_path, channels["forge"], "python=3.11", "six")
    sbom = sbom_of(str(lock), capsys, "--platform", "linux-64")
    assert {c["name"] for c in sbom["components"]} == {"python", "six", "zlib"}
    assert all("licenses" not in c for c in sbom["components"])  # a conda-lock.yml records none
    capsys.readouterr()
    assert envguard("export", str(lock), "--format", "cyclonedx", "--pinned") == 2
    assert "--pinned does not apply to --format cyclonedx" in capsys.readouterr().err
    assert envguard("export", str(tmp_path / "environment.yml"), "--format", "cyclonedx") == 2
    assert "needs resolved packages" in capsys.readouterr().err
