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
    assert components["tinyproj"]["licenses"] == [{"license": {"acknowledgement": "declared", "id": "MIT"}}]
    assert components["numpy"]["licenses"] == [
        {"license": {"acknowledgement": "declared", "id": "BSD-3-Clause"}}
    ]
    record = json.loads(next((prefix / "conda-meta").glob("numpy-*.json")).read_text())
    assert {"alg": "SHA-256", "content": record["sha256"]} in components["numpy"]["hashes"]
    graph = {d["ref"]: d.get("dependsOn", []) for d in sbom["dependencies"]}
    assert components["python"]["purl"] in graph[components["numpy"]["purl"]]
    assert components["tinyproj"]["purl"] in graph["environment"]
    assert components["python"]["purl"] not in graph["environment"]  # numpy needs it: not top-level
    again = sbom_of(str(prefix), capsys)
    assert sbom["specVersion"] == "1.6" and again["serialNumber"] != sbom["serialNumber"]  # one per BOM
    assert again["components"] == sbom["components"] and again["dependencies"] == sbom["dependencies"]


def test_lock_sbom_validates_and_options_that_do_not_apply_are_refused(
    channels: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = spec_lock(tmp_path, channels["forge"], "python=3.11", "six")
    sbom = sbom_of(str(lock), capsys, "--platform", "linux-64")
    assert {c["name"] for c in sbom["components"]} == {"python", "six", "zlib"}
    assert all("licenses" not in c for c in sbom["components"])  # a conda-lock.yml records none
    out = tmp_path / "sbom.json"
    capsys.readouterr()
    assert (
        envguard("export", str(lock), "--format", "cyclonedx", "--platform", "linux-64", "-o", str(out)) == 0
    )
    graph = validated(out.read_text())["dependencies"]
    edges = sum(len(d.get("dependsOn", [])) for d in graph if d["ref"] != "environment")
    err = capsys.readouterr().err
    assert f"wrote {out}: 3 components (3 conda, 0 pip), " in err and err.rstrip().endswith(
        f"{edges} dependencies"
    )
    capsys.readouterr()
    assert envguard("export", str(lock), "--format", "cyclonedx", "--pinned") == 2
    assert "--pinned does not apply to --format cyclonedx" in capsys.readouterr().err
    assert envguard("export", str(tmp_path / "environment.yml"), "--format", "cyclonedx") == 2
    assert "needs resolved packages" in capsys.readouterr().err


# --- the pip side: a graph from Requires-Dist, honest licences and local packages, against cyclonedx-py ---

# (name, version, METADATA headers): a dotted name, a marker false here, an extra's dependency, licences given
# only as a classifier, as a non-SPDX `License`, as an expression, and as licence text
WHEELS: list[tuple[str, str, list[tuple[str, str]]]] = [
    (
        "Web.Client",
        "1.0",
        [
            ("Classifier", "License :: OSI Approved :: MIT License"),
            ("Classifier", "Programming Language :: Python :: 3"),
            ("Requires-Dist", "six"),
            ("Requires-Dist", "zope_helper>=1"),
            ("Requires-Dist", 'oldonly; python_version < "3.0"'),
            ("Requires-Dist", 'socks-extra; extra == "socks"'),
            ("Requires-Dist", 'not-installed; sys_platform == "linux"'),
            ("Provides-Extra", "socks"),
            ("Summary", "A web client"),
            ("Project-URL", "Source, https://example.org/web-client"),
        ],
    ),
    ("zope_helper", "2.0", [("License", "PSF"), ("Requires-Dist", "socks-extra")]),
    ("oldonly", "1.0", [("License-Expression", "Apache-2.0 OR MIT"), ("License", "ignored: PEP 639")]),
    ("socks-extra", "1.0", [("License", "Permission is hereby granted, free of charge,\n to any person")]),
]


def build_wheel(folder: Path, name: str, version: str, headers: list[tuple[str, str]]) -> Path:
    """A real wheel file pip installs: METADATA with `headers`, WHEEL, RECORD and one module."""
    import zipfile

    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{name.replace('-', '_')}-{version}"
    info = f"{stem}.dist-info"
    metadata = f"Metadata-Version: 2.4\nName: {name}\nVersion: {version}\n"
    metadata += "".join(f"{key}: {value.replace(chr(10), chr(10) + '        ')}\n" for key, value in headers)
    files = {
        f"{name.replace('.', '_').replace('-', '_').lower()}_mod.py": "X = 1\n",
        f"{info}/METADATA": metadata,
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    files[f"{info}/RECORD"] = "".join(f"{path},,\n" for path in files) + f"{info}/RECORD,,\n"
    wheel = folder / f"{stem}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel


def cyclonedx_py(python: Path, *extra: str) -> dict[str, Any]:
    """The real `cyclonedx-py environment` (cyclonedx-bom) of the environment of `python`."""
    import subprocess
    import sys

    tool = Path(sys.executable).parent / "cyclonedx-py"
    done = subprocess.run(
        [str(tool), "environment", "--sv", "1.6", "--of", "JSON", *extra, str(python)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return validated(done.stdout)


def prefix_python(prefix: Path, folder: Path) -> Path:
    """An interpreter whose path is the prefix's site-packages (and the standard library), as a real conda
    python's is: the fixture's `bin/python` runs the test interpreter, whose own packages would be read."""
    site = next(prefix.glob("lib/python3*/site-packages"))
    script = folder / "python"
    script.write_text(f'#!/bin/sh\nPYTHONPATH="{site}" exec "{prefix / "bin" / "python"}" -S "$@"\n')
    script.chmod(0o755)
    return script


def pip_side(sbom: dict[str, Any], names: set[str]) -> tuple[set[tuple[str, str]], set[str]]:
    """(edges between the named components, the named components with a licence), by canonical name."""
    from packaging.utils import canonicalize_name

    refs = {c["bom-ref"]: canonicalize_name(c["name"]) for c in sbom["components"]}
    edges = {
        (refs[d["ref"]], refs[t])
        for d in sbom["dependencies"]
        for t in d.get("dependsOn", [])
        if refs.get(d["ref"]) in names
    }
    licensed = {
        refs[c["bom-ref"]] for c in sbom["components"] if c.get("licenses") and refs[c["bom-ref"]] in names
    }
    return edges, licensed


def assert_pip_side_holds(ours: dict[str, Any], theirs: dict[str, Any], pip: set[str]) -> None:
    """envguard's pip side has every edge and licence cyclonedx-py's has, but the edge whose marker is false
    here (`oldonly; python_version < "3.0"`, which cyclonedx-py draws without evaluating it)."""
    from packageurl import PackageURL

    our_edges, our_licensed = pip_side(ours, pip)
    their_edges, their_licensed = pip_side(theirs, pip)
    assert ("web-client", "oldonly") in their_edges and ("web-client", "oldonly") not in our_edges
    assert their_edges - our_edges == {("web-client", "oldonly")}
    assert len(our_edges) >= len(their_edges) - 1 and our_licensed >= their_licensed
    assert len(our_licensed) > len(their_licensed)  # `License: PSF` and licence text: cyclonedx-py drops them
    for component in ours["components"]:
        if "purl" in component:
            assert PackageURL.from_string(component["purl"]).to_string() == component["purl"]


def test_a_conda_and_pip_prefix_has_the_pip_graph_licences_and_its_local_package(
    make_prefix: MakePrefix, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.helpers import make_project

    prefix = make_prefix(["python=3.11", "six", "pip"])
    for wheel in WHEELS:
        build_wheel(tmp_path / "wheels", *wheel)
    names = [f"{name}=={version}" for name, version, _ in WHEELS]  # from an index (find-links): a registry's
    pip_install(prefix, "--find-links", str(tmp_path / "wheels"), *names)
    pip_install(prefix, str(make_project(tmp_path / "src" / "envguard-local", "envguard-local")))
    sbom = sbom_of(str(prefix), capsys)
    components = by_name(sbom)
    client = components["Web.Client"]
    assert client["purl"] == "pkg:pypi/web.client@1.0"  # packageurl's form: lowercase, the dot kept
    assert client["licenses"] == [{"license": {"acknowledgement": "declared", "id": "MIT"}}]
    assert client["description"] == "A web client"
    assert components["zope_helper"]["licenses"] == [
        {"license": {"acknowledgement": "declared", "name": "PSF"}}
    ]
    assert components["oldonly"]["licenses"] == [
        {"acknowledgement": "declared", "expression": "Apache-2.0 OR MIT"}
    ]
    assert components["socks-extra"]["licenses"][0]["license"]["text"]["content"].startswith("Permission")
    local = components["envguard-local"]
    assert "purl" not in local and local["bom-ref"] == "pip-local:envguard-local@0.1.0"
    assert local["externalReferences"][0]["type"] == "distribution"
    assert local["externalReferences"][0]["url"].startswith("file://")
    graph = {d["ref"]: set(d.get("dependsOn", [])) for d in sbom["dependencies"]}
    assert graph[client["bom-ref"]] == {
        components[n]["bom-ref"] for n in ("six", "zope_helper", "socks-extra")
    }  # six is conda's: found by its dist-info's name
    assert components["six"]["purl"].startswith("pkg:conda/six@1.16.0?")
    assert (
        client["bom-ref"] in graph["environment"] and components["six"]["bom-ref"] not in graph["environment"]
    )
    theirs = cyclonedx_py(prefix_python(prefix, tmp_path), "-S")
    pip = {"web-client", "zope-helper", "oldonly", "socks-extra", "envguard-local"}
    assert_pip_side_holds(sbom, theirs, pip)


@pytest.mark.slow  # builds a venv and runs cyclonedx-py in it: 32 s of --quick's 10.6 min under load 7-11
def test_a_venv_sbom_matches_cyclonedx_py_on_the_pip_side(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import subprocess
    import sys

    from tests.helpers import make_project, make_venv

    for wheel in [*WHEELS, ("six", "1.16.0", [("License", "MIT")])]:
        build_wheel(tmp_path / "wheels", *wheel)
    names = [f"{name}=={version}" for name, version, _ in WHEELS]
    venv = make_venv(
        tmp_path / "venv", sys.executable, "--find-links", str(tmp_path / "wheels"), *names, "six"
    )
    project = make_project(tmp_path / "src" / "proja")
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--no-index"]
    subprocess.run([*pip, "--no-deps", "-e", str(project)], check=True, capture_output=True)
    sbom = sbom_of(str(venv), capsys)
    components = by_name(sbom)
    assert "purl" not in components["proja"]  # an editable folder: no registry holds it
    assert components["proja"]["externalReferences"][0]["type"] == "distribution"
    theirs = cyclonedx_py(venv / "bin" / "python")
    pip_names = {"web-client", "zope-helper", "oldonly", "socks-extra", "six", "proja"}
    assert_pip_side_holds(sbom, theirs, pip_names)
    assert {c["name"] for c in theirs["components"]} <= {c["name"] for c in sbom["components"]}


def test_two_records_of_one_package_get_unique_bom_refs_and_a_long_name_is_linear() -> None:
    from envguard.formats import cyclonedx
    from envguard.model import Package, make_environment

    twice = [
        Package("pip", "six", "1.16.0"),
        Package("pip", "six", "1.16.0"),
        Package("pip", "six", "1.17.0"),
    ]
    sbom = validated(cyclonedx.render(make_environment(kind="venv", packages=twice)).text)
    refs = [c["bom-ref"] for c in sbom["components"]]
    assert len(refs) == len(set(refs)) == 3
    long = make_environment(kind="venv", packages=[Package("pip", "a" * 100_000, "1.0")])
    assert validated(cyclonedx.render(long).text)["components"][0]["name"] == "a" * 100_000


def test_direct_url_installs_and_names_no_purl_can_carry() -> None:
    from envguard.formats import cyclonedx
    from envguard.model import Package, PipOrigin, make_environment

    commit = "0123456789abcdef0123456789abcdef01234567"
    git = Package(
        "pip",
        "gitpkg",
        "2.0",
        origin=PipOrigin(url="https://github.com/o/gitpkg.git", vcs="git", commit_id=commit),
    )
    wheel = Package(
        "pip", "wheelpkg", "1.0", origin=PipOrigin(url="https://host.example/wheelpkg-1.0-py3-none-any.whl")
    )
    spoof = Package("conda", "evil/numpy", "1.0", "h_0", subdir="linux-64")
    lock_pip = Package("pip", "needs", "1.0", depends=("wheelpkg >=1",))  # a lock's pip entry: no metadata
    env = make_environment(kind="conda-lock", packages=[git, wheel, spoof, lock_pip])
    components = by_name(validated(cyclonedx.render(env).text))
    assert (
        components["gitpkg"]["purl"]
        == f"pkg:pypi/gitpkg@2.0?vcs_url=git%2Bhttps://github.com/o/gitpkg.git%40{commit}"
    )
    assert components["gitpkg"]["externalReferences"][0] == {
        "comment": "installed from: git (PEP 610)",
        "type": "vcs",
        "url": f"https://github.com/o/gitpkg.git#{commit}",
    }
    assert "download_url=https://host.example/wheelpkg-1.0-py3-none-any.whl" in components["wheelpkg"]["purl"]
    assert "purl" not in components["evil/numpy"]  # pkg:conda/evil/numpy would read back as namespace evil
    graph = {d["ref"]: d.get("dependsOn", []) for d in validated(cyclonedx.render(env).text)["dependencies"]}
    assert graph[components["needs"]["bom-ref"]] == [components["wheelpkg"]["bom-ref"]]
