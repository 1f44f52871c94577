"""The dependency graph of installed conda packages (pure): leaves (what a user most likely asked for) and
conda's install order for explicit specs."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from envguard.model import Package
from envguard.specs import spec_name


def _parents(packages: Sequence[Package]) -> dict[str, set[str]]:
    """name -> names of installed packages it depends on (conda's PrefixGraph edges, matched by name)."""
    names = {p.name for p in packages}
    # (deps & names) - {self}: `names - {p.name}` first would copy every name once per package (quadratic:
    # export of a 100,000-package lock did not finish in 10 minutes)
    graph = {p.name: ({spec_name(d) for d in p.depends} & names) - {p.name} for p in packages}
    if "python" in graph:
        graph["python"].discard("pip")  # conda breaks the python <-> pip cycle the same way
    if "menuinst" in graph and "python" in graph:
        for name, parents in graph.items():
            if "python" in parents and name not in graph["menuinst"] and name != "menuinst":
                parents.add("menuinst")
    return graph


def leaves(packages: Iterable[Package]) -> tuple[Package, ...]:
    """Conda packages no other installed package depends on (what a user most likely asked for)."""
    pkgs = tuple(packages)
    graph = _parents(pkgs)
    needed = set().union(*graph.values()) if graph else set()
    return tuple(p for p in pkgs if p.name not in needed)


def install_order(packages: Iterable[Package]) -> tuple[Package, ...]:
    """conda's order for `conda list --explicit`: disconnected packages first, then dependencies before
    dependents, alphabetical within each level; a cycle is broken at the package with the fewest parents."""
    pkgs = {p.name: p for p in packages}
    graph = _parents(list(pkgs.values()))
    is_parent = set().union(*graph.values()) if graph else set()
    order = sorted(n for n, parents in graph.items() if not parents and n not in is_parent)
    emitted = set(order)
    while graph:
        ready = sorted(n for n, parents in graph.items() if not parents)
        if not ready:
            ready = [min(graph, key=lambda n: (len(graph[n]), _dist_str(pkgs[n])))]
        for name in ready:
            graph.pop(name)
            if name not in emitted:
                order.append(name)
                emitted.add(name)
        for parents in graph.values():
            parents.difference_update(ready)
    return tuple(pkgs[n] for n in order)


def _dist_str(package: Package) -> str:
    return f"{package.channel}/{package.subdir}::{package.name}-{package.version}-{package.build}"
