"""Write an environment as a CycloneDX 1.6 JSON SBOM (pure: Environment -> text).

One `library` component per package, named by its purl: `pkg:conda/NAME@VERSION?build=..&channel=..
&subdir=..&type=conda` (the purl spec's conda type) and `pkg:pypi/NAME@VERSION`; the archive's SHA-256 and
MD5 where known, the declared license where the environment's records carry one, conda's build facts as
`conda:*` properties, and the dependency graph from the records' `depends` (the environment itself depends
on its top-level packages). Deterministic: no timestamp, a serial number derived from the content, sorted.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from envguard.channels import strip_credentials
from envguard.depgraph import leaves
from envguard.model import Environment, Package
from envguard.specs import canonical_name, spec_name
from envguard.version import __version__

SPEC_VERSION = "1.6"
ROOT_REF = "environment"
# an SPDX expression: ids joined by AND/OR/WITH, parentheses; anything else is written as a license name
_SPDX = re.compile(r"^[()]*[A-Za-z0-9.+-]+[()]*( (AND|OR|WITH|and|or|with) [()]*[A-Za-z0-9.+-]+[()]*)*$")


def purl(package: Package) -> str:
    """The package URL of a conda or pip package."""
    if package.manager == "pip":
        return f"pkg:pypi/{_quote(canonical_name(package.name))}@{_quote(package.version)}"
    qualifiers = {
        "build": package.build,
        "channel": strip_credentials(package.channel),
        "subdir": package.subdir,
        "type": _archive_type(package.filename),
    }
    query = "&".join(f"{k}={_quote(v)}" for k, v in sorted(qualifiers.items()) if v)
    text = f"pkg:conda/{_quote(package.name.lower())}@{_quote(package.version)}"
    return f"{text}?{query}" if query else text


def render(env: Environment, licenses: Mapping[tuple[str, str], str] | None = None) -> str:
    """The SBOM of `env`'s packages; `licenses`: (manager, name) -> declared license text."""
    declared = licenses or {}
    refs = {p.key: purl(p) for p in env.packages}
    components = [_component(p, refs[p.key], declared.get(p.key)) for p in env.packages]
    components.sort(key=lambda c: str(c["bom-ref"]))
    document: dict[str, Any] = {
        "$schema": f"http://cyclonedx.org/schema/bom-{SPEC_VERSION}.schema.json",
        "bomFormat": "CycloneDX",
        "specVersion": SPEC_VERSION,
        "serialNumber": f"urn:uuid:{_serial(refs.values())}",
        "version": 1,
        "metadata": {
            "tools": {"components": [{"type": "application", "name": "envguard", "version": __version__}]},
            "component": _root(env),
        },
        "components": components,
        "dependencies": _dependencies(env, refs),
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _component(package: Package, ref: str, license_text: str | None) -> dict[str, Any]:
    component: dict[str, Any] = {
        "type": "library",
        "bom-ref": ref,
        "name": package.name,
        "version": package.version,
        "purl": ref,
    }
    hashes = [
        {"alg": alg, "content": value.lower()}
        for alg, value in (("SHA-256", package.sha256), ("MD5", package.md5))
        if value and re.fullmatch(r"[0-9a-fA-F]+", value)
    ]
    if hashes:
        component["hashes"] = hashes
    if license_text:
        component["licenses"] = [_license(license_text)]
    if package.manager == "conda":
        properties = [
            ("conda:build", package.build),
            ("conda:build_number", str(package.build_number)),
            ("conda:channel", strip_credentials(package.channel)),
            ("conda:subdir", package.subdir),
            ("conda:url", strip_credentials(package.url)),
        ]
        component["properties"] = [{"name": k, "value": v} for k, v in properties if v]
    elif (
        package.origin is not None
        and "://" in package.origin.url
        and not package.origin.url.startswith("file:")
    ):
        url = strip_credentials(package.origin.url)
        kind = "vcs" if package.origin.vcs else "distribution"
        component["externalReferences"] = [{"type": kind, "url": url}]
    return component


def _license(text: str) -> dict[str, Any]:
    return {"expression": text} if _SPDX.match(text) else {"license": {"name": text}}


def _root(env: Environment) -> dict[str, Any]:
    root: dict[str, Any] = {"type": "application", "bom-ref": ROOT_REF, "name": env.name or "environment"}
    properties = [("envguard:platform", env.platform or ""), ("envguard:source_kind", env.kind)]
    root["properties"] = [{"name": k, "value": v} for k, v in properties if v]
    return root


def _dependencies(env: Environment, refs: Mapping[tuple[str, str], str]) -> list[dict[str, Any]]:
    """The environment depends on its top-level packages; each conda package on what its `depends` name
    (virtual packages and names not installed are left out); pip records no dependencies here."""
    tops = [refs[p.key] for p in leaves(env.conda_packages())] + [refs[p.key] for p in env.pip_packages()]
    graph = [{"ref": ROOT_REF, "dependsOn": sorted(set(tops))}]
    for package in env.packages:
        wanted = {refs.get(("conda", spec_name(d))) for d in package.depends}
        graph.append({"ref": refs[package.key], "dependsOn": sorted(r for r in wanted if r)})
    return sorted(graph, key=lambda d: (d["ref"] != ROOT_REF, d["ref"]))


def _archive_type(filename: str) -> str:
    if filename.endswith(".conda"):
        return "conda"
    return "tar.bz2" if filename.endswith(".tar.bz2") else ""


def _quote(text: str) -> str:
    return quote(text, safe=".-_~+:/")


def _serial(refs: Any) -> str:
    """A UUID derived from the sorted component refs: the same environment gets the same serial number."""
    digest = hashlib.sha256("\n".join(sorted(refs)).encode()).hexdigest()
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"envguard:{digest}"))
