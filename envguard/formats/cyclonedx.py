"""Write an environment as a CycloneDX 1.6 JSON SBOM, built with cyclonedx-python-lib's model and serializer
and named with packageurl-python's purls (pure: Environment and what its packages declare -> text).

One `library` component per package record: `pkg:conda/NAME@VERSION?build=..&channel=..&subdir=..&type=conda`
(the purl spec's conda type) or `pkg:pypi/NAME@VERSION` with the name as the package spells it (packageurl
lowercases it and turns `_` into `-`: `boolean.py` stays `boolean.py`). A pip package installed from a local
folder or file gets no purl (a scanner would match it against the registry's project of that name) but a
`distribution` reference to where it came from; a VCS install the purl's `vcs_url`, as cyclonedx-py writes.
Hashes (the archive's SHA-256 and MD5), licences through the library's LicenseFactory (SPDX ids and
expressions where they are valid, named licences otherwise), conda's build facts as `conda:*` properties.
One dependency graph: conda packages from their records' `depends`, pip packages from `Requires-Dist` with
markers evaluated for the environment's interpreter and platform; the environment depends on the packages
nothing else depends on. A fresh serial number (uuid4) and timestamp per BOM, as CycloneDX asks.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from envguard.channels import strip_credentials
from envguard.formats.pipgraph import marker_environment, requirement_names
from envguard.formats.trove import licence_of
from envguard.model import Environment, Package
from envguard.prefix.licenses import Declared, Key
from envguard.specs import canonical_name, spec_name
from envguard.version import __version__

if TYPE_CHECKING:
    from cyclonedx.model.component import Component
    from cyclonedx.model.license import License

SPEC_VERSION = "1.6"
ROOT_REF = "environment"
_NAMED_MAX = 200  # a License header longer than this (or several lines) is licence text, not a name


@dataclass(frozen=True, slots=True)
class Rendered:
    """The SBOM text and what it holds, for the "wrote" line."""

    text: str
    conda: int
    pip: int
    edges: int

    @property
    def summary(self) -> str:
        total = self.conda + self.pip
        return f"{total} components ({self.conda} conda, {self.pip} pip), {self.edges} dependencies"


def render(env: Environment, declared: Mapping[Key, Declared] | None = None) -> Rendered:
    """The SBOM of `env`'s packages; `declared`: what each installed package's own metadata says."""
    from cyclonedx.model.bom import Bom
    from cyclonedx.model.component import Component, ComponentType
    from cyclonedx.model.dependency import Dependency

    said = declared or {}
    bom = Bom()
    bom.metadata.tools.components.add(
        Component(type=ComponentType.APPLICATION, name="envguard", version=__version__)
    )
    root = _root(env)
    bom.metadata.component = root
    components: list[Component] = []
    taken: dict[str, int] = {ROOT_REF: 1}
    for package in env.packages:
        info = said.get((package.manager, package.name, package.version), Declared())
        components.append(_component(package, info, taken))
    bom.components.update(components)
    graph = _graph(env, said, components)
    needed = {id(c) for deps in graph.values() for c in deps}
    tops = [c for c in components if id(c) not in needed]
    # one Dependency per component, made here: Bom.register_dependency scans every entry made so far
    bom.dependencies.update(
        Dependency(ref=c.bom_ref, dependencies=[Dependency(ref=d.bom_ref) for d in deps])
        for c, deps in [(root, tops), *((c, graph[id(c)]) for c in components)]
    )
    conda = sum(p.manager == "conda" for p in env.packages)
    edges = sum(len(deps) for deps in graph.values())
    return Rendered(_serialized(bom), conda, len(env.packages) - conda, edges)


def _serialized(bom: Any) -> str:
    """The BOM as CycloneDX 1.6 JSON by the library's serializer: the model's `as_json` for the 1.6 view,
    with the document keys `JsonV1Dot6` adds. Not `JsonV1Dot6.output_as_string` itself: it first runs the
    library's deprecated `Bom.validate`, which registers each component by a scan of all (quadratic: minutes
    at 10,000 packages). What that ensures holds by construction here (one unique bom-ref and one dependency
    entry per component, every reference known, an expression alone), and the tests run the strict schema
    validator on what is written."""
    from cyclonedx.schema.schema import SchemaVersion1Dot6

    body = json.loads(bom.as_json(view_=SchemaVersion1Dot6))
    document = {
        "$schema": f"http://cyclonedx.org/schema/bom-{SPEC_VERSION}.schema.json",
        "bomFormat": "CycloneDX",
        "specVersion": SPEC_VERSION,
        **body,
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def purl(package: Package, declared: Declared | None = None) -> str | None:
    """The package URL of a conda or pip package, as packageurl-python writes it; None for a pip package
    from a local folder or file (no registry holds it) or a name no purl can carry unchanged."""
    from packageurl import PackageURL

    if package.manager == "pip":
        origin = package.origin
        qualifiers: dict[str, str] = {}
        if origin is not None and origin.url:
            url = strip_credentials(origin.url)
            if _local(url):
                return None
            if origin.vcs:
                base = url if url.startswith(f"{origin.vcs}+") else f"{origin.vcs}+{url}"
                qualifiers["vcs_url"] = f"{base}@{origin.commit_id}" if origin.commit_id else base
            elif "://files.pythonhosted.org/" not in url:
                qualifiers["download_url"] = url
        name = declared.name if declared is not None and declared.name else package.name
        made = PackageURL(type="pypi", name=name, version=package.version, qualifiers=qualifiers)
    else:
        conda = {
            "build": package.build,
            "channel": strip_credentials(package.channel),
            "subdir": package.subdir,
            "type": _archive_type(package.filename),
        }
        made = PackageURL(
            type="conda",
            name=package.name,
            version=package.version,
            qualifiers={k: v for k, v in conda.items() if v},
        )
    text = made.to_string()
    # a name holding `/`, `@` or `?` would read back as another package (a namespace, a version): no purl
    back = PackageURL.from_string(text)
    return (
        text
        if (back.namespace, back.name, back.version) == (made.namespace, made.name, made.version)
        else None
    )


def _component(package: Package, info: Declared, taken: dict[str, int]) -> Component:
    from cyclonedx.model import HashAlgorithm, HashType, Property
    from cyclonedx.model.bom_ref import BomRef
    from cyclonedx.model.component import Component, ComponentType
    from packageurl import PackageURL

    text = purl(package, info)
    ref = text or f"{package.manager}-local:{canonical_name(package.name)}@{package.version}"
    component = Component(
        type=ComponentType.LIBRARY,
        bom_ref=BomRef(_unique(ref, taken)),
        name=info.name or package.name,
        version=package.version,
        purl=PackageURL.from_string(text) if text else None,
        description=info.summary or None,
        licenses=_licenses(info, package.name),
        external_references=_references(package, info),
    )
    digests = ((HashAlgorithm.SHA_256, package.sha256, 64), (HashAlgorithm.MD5, package.md5, 32))
    component.hashes.update(
        HashType(alg=alg, content=value.lower()) for alg, value, size in digests if _hex(value, size)
    )
    if package.manager == "conda":
        facts = [
            ("conda:build", package.build),
            ("conda:build_number", str(package.build_number)),
            ("conda:channel", strip_credentials(package.channel)),
            ("conda:subdir", package.subdir),
            ("conda:url", strip_credentials(package.url)),
        ]
        component.properties.update(Property(name=k, value=v) for k, v in facts if v)
    return component


def _licenses(info: Declared, name: str) -> Sequence[License]:
    """PEP 639: `License-Expression` alone where present; else the classifiers and `License`. CycloneDX takes
    one expression or a list of ids and names: an expression wins over the rest."""
    from cyclonedx.contrib.license.factories import LicenseFactory
    from cyclonedx.model import AttachedText
    from cyclonedx.model.license import DisjunctiveLicense, LicenseAcknowledgement, LicenseExpression

    factory, declared = LicenseFactory(), LicenseAcknowledgement.DECLARED
    if info.expression:
        return [factory.make_from_string(info.expression, license_acknowledgement=declared)]
    found: list[License] = [
        factory.make_from_string(licence_of(c), license_acknowledgement=declared) for c in info.classifiers
    ]
    text = info.license
    if text and ("\n" in text or len(text) > _NAMED_MAX):  # the licence's text, not its name
        found.append(
            DisjunctiveLicense(
                name=f"declared license of '{name}'",
                acknowledgement=declared,
                text=AttachedText(content=text),
            )
        )
    elif text:
        found.append(factory.make_from_string(text, license_acknowledgement=declared))
    expressions = [f for f in found if isinstance(f, LicenseExpression)]
    if expressions:
        return expressions[:1]
    unique: dict[tuple[str, str], License] = {}
    for licence in found:
        assert isinstance(licence, DisjunctiveLicense)
        unique.setdefault((str(licence.id or ""), str(licence.name or "")), licence)
    return list(unique.values())


def _references(package: Package, info: Declared) -> list[Any]:
    from cyclonedx.exception.model import InvalidUriException
    from cyclonedx.model import ExternalReference, ExternalReferenceType, XsUri

    found: list[ExternalReference] = []
    origin = package.origin
    if package.manager == "pip" and origin is not None and origin.url:
        url = strip_credentials(origin.url)
        if origin.vcs:
            kind, url = ExternalReferenceType.VCS, f"{url}#{origin.commit_id}" if origin.commit_id else url
        else:
            kind = ExternalReferenceType.DISTRIBUTION
        what = "local folder or file" if _local(url) else "direct URL" if not origin.vcs else origin.vcs
        found.append(
            ExternalReference(type=kind, url=XsUri(url), comment=f"installed from: {what} (PEP 610)")
        )
    for label, url in info.urls:
        try:
            found.append(
                ExternalReference(
                    type=_url_kind(label), url=XsUri(strip_credentials(url)), comment=f"metadata: {label}"
                )
            )
        except InvalidUriException:
            continue
    return found


def _url_kind(label: str) -> Any:
    from cyclonedx.model import ExternalReferenceType as T

    key = "".join(ch for ch in label.lower() if ch.isalpha())
    kinds = {
        "homepage": T.WEBSITE,
        "home": T.WEBSITE,
        "downloadurl": T.DISTRIBUTION,
        "download": T.DISTRIBUTION,
        "documentation": T.DOCUMENTATION,
        "docs": T.DOCUMENTATION,
        "source": T.VCS,
        "sourcecode": T.VCS,
        "repository": T.VCS,
        "github": T.VCS,
        "issues": T.ISSUE_TRACKER,
        "bugtracker": T.ISSUE_TRACKER,
        "issuetracker": T.ISSUE_TRACKER,
        "tracker": T.ISSUE_TRACKER,
        "changelog": T.RELEASE_NOTES,
        "changes": T.RELEASE_NOTES,
        "releasenotes": T.RELEASE_NOTES,
        "chat": T.CHAT,
    }
    return kinds.get(key, T.OTHER)


def _graph(
    env: Environment, declared: Mapping[Key, Declared], components: Sequence[Component]
) -> dict[int, list[Component]]:
    """id(component) -> the components it depends on: a conda package what its `depends` name, a pip package
    what its `Requires-Dist` names (markers true here), found among pip packages first, then conda packages
    by the PyPI name of their dist-info or their own name. Names not installed are left out."""
    conda_by_name: dict[str, Component] = {}
    pip_by_name: dict[str, Component] = {}
    for package, component in zip(env.packages, components, strict=True):
        if package.manager == "conda":
            conda_by_name.setdefault(package.name, component)
        else:
            pip_by_name.setdefault(canonical_name(package.name), component)
    python_names = dict(pip_by_name)
    for package, component in zip(env.packages, components, strict=True):
        if package.manager == "conda":
            info = declared.get((package.manager, package.name, package.version))
            for pypi in (info.pypi_names if info else ()) or (canonical_name(package.name),):
                python_names.setdefault(pypi, component)
    marker_env = marker_environment(env)
    graph: dict[int, list[Component]] = {}
    for package, component in zip(env.packages, components, strict=True):
        info = declared.get((package.manager, package.name, package.version))
        if package.manager == "conda":
            targets = _found((spec_name(d) for d in package.depends), conda_by_name)
        elif info is not None and (info.requires or not package.depends):
            targets = _found(requirement_names(info.requires, info.extras, marker_env), python_names)
        else:  # a lock's pip entry: its recorded dependencies
            targets = _found((canonical_name(spec_name(d)) for d in package.depends), python_names)
        graph[id(component)] = [t for t in targets if t is not component]
    return graph


def _found(names: Iterable[str], by_name: Mapping[str, Component]) -> list[Component]:
    found: dict[int, Component] = {}
    for name in names:
        target = by_name.get(name)
        if target is not None:
            found.setdefault(id(target), target)
    return list(found.values())


def _root(env: Environment) -> Component:
    from cyclonedx.model import Property
    from cyclonedx.model.bom_ref import BomRef
    from cyclonedx.model.component import Component, ComponentType

    facts = [("envguard:platform", env.platform or ""), ("envguard:source_kind", env.kind)]
    return Component(
        type=ComponentType.APPLICATION,
        name=env.name or "environment",
        bom_ref=BomRef(ROOT_REF),
        properties=[Property(name=k, value=v) for k, v in facts if v],
    )


def _unique(ref: str, taken: dict[str, int]) -> str:
    """`ref`, or `ref#2`, `ref#3`... where two records give one package's ref (a bom-ref must be unique)."""
    count = taken.get(ref, 0) + 1
    taken[ref] = count
    return ref if count == 1 else f"{ref}#{count}"


def _local(url: str) -> bool:
    return url.startswith("file:") or "://" not in url


def _hex(value: str, size: int) -> bool:
    return len(value) == size and all(ch in "0123456789abcdefABCDEF" for ch in value)


def _archive_type(filename: str) -> str:
    if filename.endswith(".conda"):
        return "conda"
    return "tar.bz2" if filename.endswith(".tar.bz2") else ""
