"""Two-way comparison of environments: pure, grouped by category, the same for every pair of SOURCE kinds.

Each Environment becomes a normalised three-level view (category -> item -> field -> text); the views are
compared with deepdiff (or, where start-up time matters, an equivalent small engine — `envguard check` cannot
afford deepdiff's import) and the leaf differences are grouped into `Difference`s. A spec-only
side (environment.yml) is compared by satisfaction instead (see envguard.diff.satisfy).

The deepdiff engine first finds the differing items with the small engine (plain dict walking, milliseconds
for thousands of packages) and hands deepdiff only those items for the field-level explanation: identical
environments never import deepdiff, and two 3,000-package environments that differ in ten packages cost
deepdiff ten items, not 3,000.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from operator import attrgetter
from typing import Any, Literal

from envguard.diff.changes import CATEGORIES, Diff, Difference
from envguard.model import FINGERPRINT_FIELDS, LOCAL_ORIGIN, Environment, Package
from envguard.specs import canonical_name
from envguard.textio import gc_paused

Engine = Literal["deepdiff", "fast"]
# Fields a side may simply not know (old records lack sha256, locks lack build numbers): compared only when
# both sides have a value.
_OPTIONAL_FIELDS = frozenset({"build", "channel", "subdir", "md5", "sha256", "implementation"})
View = dict[str, dict[str, dict[str, str]]]


@gc_paused()
def exact(a: Environment, b: Environment, *, engine: Engine = "deepdiff") -> Diff:
    """Compare two resolved environments A and B two-way, item by item."""
    view_a, view_b, notes = aligned_views(a, b)
    leaves = fast_leaves(view_a, view_b)
    if engine == "deepdiff" and leaves:
        leaves = deepdiff_leaves(*narrowed(view_a, view_b, leaves))
    changes = _changes(leaves, view_a, view_b) + both_manager_hazards(a, b)
    return Diff(_label(a), _label(b), "exact", tuple(changes), tuple(notes))


def _label(env: Environment) -> str:
    return env.source or env.prefix or env.kind


# --- views --------------------------------------------------------------------------------------------------


def view(env: Environment, only: Mapping[str, set[str]] | None = None) -> View:
    """The normalised comparison view of one environment; with `only`, of just those conda and pip names
    (the other categories are always whole)."""
    result: View = {c: {} for c in ("platform", "python", "conda", "pip", "cuda", "virtual", "fingerprints")}
    if env.platform:
        result["platform"]["platform"] = {"value": env.platform}
    if env.python:
        result["python"]["python"] = {"version": env.python}
        if env.python_implementation:  # compared only when both sides know it (aligned_views)
            result["python"]["python"]["implementation"] = env.python_implementation
    for p in env.packages:
        if only is not None and p.name not in only[p.manager]:
            continue
        if p.manager == "conda":
            result["conda"][p.name] = {
                "version": p.version,
                "build": p.build,
                "channel": p.channel,
                "subdir": p.subdir,
                "md5": p.md5,
                "sha256": p.sha256,
            }
        else:
            o = p.origin
            result["pip"][p.name] = {
                "version": p.version,
                "sha256": p.sha256,
                "url": o.url if o else "",
                "editable": "yes" if o and o.editable else "no",
                "vcs": o.vcs if o else "",
                "commit": o.commit_id if o else "",
            }
    cuda = env.cuda
    for name, value in (("driver", cuda.driver), ("toolkit", cuda.toolkit), ("torch build", _torch(env))):
        if value:
            result["cuda"][name] = {"value": value}
    for v in env.virtual_packages:
        result["virtual"][v.name] = {"version": v.version, "build": v.build}
    if env.fingerprints is not None:
        for name in FINGERPRINT_FIELDS:
            value = getattr(env.fingerprints, name)
            if value:
                result["fingerprints"][name] = {"value": str(value)}
    return result


def _torch(env: Environment) -> str | None:
    build = env.cuda.torch_build
    if build == "absent":
        return None
    return f"{build} {env.cuda.torch_cuda}" if env.cuda.torch_cuda else build


def aligned_views(a: Environment, b: Environment, *, whole: bool = False) -> tuple[View, View, list[str]]:
    """Views of A and B with what one side cannot know removed from both (so it never counts as a change).
    Unless `whole`, a package equal on both sides is left out of both views: its two entries are the same
    function of the same Package, and the alignment below only ever drops a field from both entries of one
    item, so it could not have differed (3,000 equal packages cost a dict lookup each, not two views)."""
    only = None if whole else _differing_names(a, b)
    va, vb = view(a, only), view(b, only)
    notes: list[str] = []
    for category in ("conda", "pip", "python"):
        for name in va[category].keys() & vb[category].keys():
            ra, rb = va[category][name], vb[category][name]
            for key in [k for k in ra | rb if k in _OPTIONAL_FIELDS and (not ra.get(k) or not rb.get(k))]:
                ra.pop(key, None)
                rb.pop(key, None)
            if category == "pip" and (
                _unrecorded_local(ra.get("url", ""), rb.get("url", ""))  # a lock without the local path
                or _from_its_own_file(a.get(name, "pip"), b.get(name, "pip"))
            ):
                ra.pop("url", None)
                rb.pop("url", None)
    for side, env, other in (("A", a, b), ("B", b, a)):
        if not env.virtual_packages and other.virtual_packages:
            notes.append(
                f"{side} records no virtual packages; virtual packages and the CUDA driver not compared"
            )
        if env.fingerprints is None and other.fingerprints is not None:
            notes.append(f"{side} has no RNG fingerprints; fingerprints not compared")
    if not a.virtual_packages or not b.virtual_packages:
        for v in (va, vb):
            v["virtual"] = {}
            v["cuda"].pop("driver", None)
    if a.fingerprints is None or b.fingerprints is None:
        va["fingerprints"], vb["fingerprints"] = {}, {}
    for category in ("platform", "python"):
        if not va[category] or not vb[category]:
            va[category], vb[category] = {}, {}
    return va, vb, notes


def _differing_names(a: Environment, b: Environment) -> dict[str, set[str]]:
    """Per manager, the names whose compared fields (those `view` shows) differ between A and B, or that are
    on one side only (the last package of a name wins, as in `view`). A live record and a lock's entry of one
    package differ in what no view shows (the order of `depends`, the build number), so the fields are
    compared, not the Packages: 100,000 equal packages then cost two views nothing."""
    result: dict[str, set[str]] = {"conda": set(), "pip": set()}
    if a.packages is b.packages:  # two reads of identical content share one decoded tuple (envs cache)
        return result
    for manager in ("conda", "pip"):
        # name -> shown fields on each side, compared in C (a call per name was 0.5 s for 100,000 packages)
        in_a, in_b = (_shown(env.packages, manager, _VIEWED[manager]) for env in (a, b))
        if in_a != in_b:
            result[manager] = {name for name, _fields in in_a.items() ^ in_b.items()}
    return result


# What `view` reads of a package, per manager (a superset is safe: an item kept whose view is equal yields no
# leaf; one left out would hide a difference: tests/diff/test_narrowing.py holds them to `view`); hashable.
_VIEWED = {
    "conda": attrgetter("version", "build", "channel", "subdir", "md5", "sha256"),
    "pip": attrgetter("version", "sha256", "origin"),
}
_NAME, _MANAGER = attrgetter("name"), attrgetter("manager")


def _shown(packages: tuple[Package, ...], manager: str, shown: Callable[[Package], Any]) -> dict[str, Any]:
    """name -> the fields `shown` reads, for the packages of `manager` (the last of a name wins); an
    environment of conda packages alone (found in C) is not filtered package by package."""
    if set(map(_MANAGER, packages)) <= {"conda"}:
        mine: Any = packages if manager == "conda" else ()
    else:
        mine = [p for p in packages if p.manager == manager]
    return dict(zip(map(_NAME, mine), map(shown, mine), strict=True))


def _unrecorded_local(a: str, b: str) -> bool:
    return LOCAL_ORIGIN in (a, b) and a.startswith("file:") and b.startswith("file:")


def _from_its_own_file(a: Package | None, b: Package | None) -> bool:
    """One side names an index release's wheel file (a lock's `url`), the other was installed from that very
    URL (direct_url.json: `conda-lock install` hands pip `NAME @ URL#sha256=...`): one file, one origin."""
    for locked, installed in ((a, b), (b, a)):
        origin = installed.origin if installed is not None else None
        if (
            locked is not None
            and locked.origin is None
            and locked.url
            and origin is not None
            and not origin.vcs
            and not origin.editable
            and origin.url == locked.url
        ):
            return True
    return False


# --- engines: (category, item, field or None, kind) leaves
# -----------------------------------------------------

Leaf = tuple[str, str, str | None, str]


def fast_leaves(a: View, b: View) -> list[Leaf]:
    """Leaf differences of two views by plain dict walking (same result as `deepdiff_leaves`)."""
    leaves: list[Leaf] = []
    for category in sorted(a.keys() | b.keys()):
        items_a, items_b = a.get(category, {}), b.get(category, {})
        for name in sorted(items_a.keys() | items_b.keys()):
            if name not in items_b:
                leaves.append((category, name, None, "only-a"))
            elif name not in items_a:
                leaves.append((category, name, None, "only-b"))
            else:
                ra, rb = items_a[name], items_b[name]
                leaves.extend(
                    (category, name, k, "changed")
                    for k in sorted(ra.keys() | rb.keys())
                    if ra.get(k) != rb.get(k)
                )
    return sorted(leaves, key=_leaf_key)


def narrowed(a: View, b: View, leaves: Iterable[Leaf]) -> tuple[View, View]:
    """A and B reduced to the items that differ (every category kept, so the shape stays the same)."""
    wanted: dict[str, set[str]] = {}
    for category, name, _field, _kind in leaves:
        wanted.setdefault(category, set()).add(name)
    keep_a: View = {c: {} for c in a}
    keep_b: View = {c: {} for c in b}
    for category, names in wanted.items():
        items_a, items_b = a.get(category, {}), b.get(category, {})
        keep_a.setdefault(category, {}).update((n, items_a[n]) for n in sorted(names) if n in items_a)
        keep_b.setdefault(category, {}).update((n, items_b[n]) for n in sorted(names) if n in items_b)
    return keep_a, keep_b


def deepdiff_leaves(a: View, b: View) -> list[Leaf]:
    """Leaf differences of two views as deepdiff reports them."""
    import deepdiff  # only where drift was found: an identical environment never pays its import

    result = deepdiff.DeepDiff(a, b, verbose_level=2, view="tree")
    leaves: set[Leaf] = set()
    for items in result.values():
        for item in items:
            path = [str(p) for p in item.path(output_format="list")]
            t1 = item.t1 if isinstance(item.t1, dict | str) else None
            t2 = item.t2 if isinstance(item.t2, dict | str) else None
            leaves.update(_expand(path, t1, t2))
    return sorted(leaves, key=_leaf_key)


def _expand(path: list[str], t1: Any, t2: Any) -> list[Leaf]:
    """deepdiff reports a container whose keys all differ as one replaced value: spell it out as leaves."""
    if len(path) >= 3:
        return [(path[0], path[1], path[2], "changed")]
    if len(path) == 2:
        if t1 is None or t2 is None:
            return [(path[0], path[1], None, "only-b" if t1 is None else "only-a")]
        return [(path[0], path[1], k, "changed") for k in t1.keys() | t2.keys() if t1.get(k) != t2.get(k)]
    if len(path) == 1:
        return fast_leaves({path[0]: t1 or {}}, {path[0]: t2 or {}})
    return []


def _leaf_key(leaf: Leaf) -> tuple[str, str, str, str]:
    return (leaf[0], leaf[1], leaf[2] or "", leaf[3])


# --- grouping
# ---------------------------------------------------------------------------------------------------


def _changes(leaves: Iterable[Leaf], a: View, b: View) -> list[Difference]:
    changed: dict[tuple[str, str], list[str]] = {}
    result: list[Difference] = []
    values: tuple[tuple[str, str | None, str | None], ...]
    for category, name, fieldname, kind in leaves:
        if kind == "changed" and fieldname is not None:
            changed.setdefault((category, name), []).append(fieldname)
        elif kind == "only-a":
            ra = a[category][name]
            values = ((_key(ra), _primary(ra), None),)
            result.append(Difference(category, "only-a", name, a=describe(category, ra), values=values))
        else:
            rb = b[category][name]
            values = ((_key(rb), None, _primary(rb)),)
            result.append(Difference(category, "only-b", name, b=describe(category, rb), values=values))
    for (category, name), fields in changed.items():
        ra, rb = a[category][name], b[category][name]
        shown = _fields(fields)
        values = tuple((f, ra.get(f), rb.get(f)) for f in _raw_order(fields))
        same = tuple((f, ra[f]) for f in _SHARED.get(category, ()) if f not in fields and ra.get(f))
        result.append(
            Difference(
                category,
                "changed",
                name,
                describe(category, ra),
                describe(category, rb),
                shown,
                values,
                same=same,
            )
        )
    order = {c: i for i, c in enumerate(CATEGORIES)}
    return sorted(result, key=lambda c: (order.get(c.category, 99), c.name, c.kind))


_SHARED = {"conda": ("version", "build", "channel")}  # what `describe` shows of a side, for Difference.same
_FIELD_ORDER = ("value", "version", "build", "channel", "subdir", "url", "editable", "vcs", "commit", "hash")


def _fields(fields: list[str]) -> tuple[str, ...]:
    """Changed field names in a fixed order; `hash` only when nothing that implies it changed too."""
    names = {"hash" if f in ("md5", "sha256") else f for f in fields}
    if names & {"version", "build"}:
        names.discard("hash")
    return tuple(sorted(names, key=lambda n: (_FIELD_ORDER.index(n) if n in _FIELD_ORDER else 99, n)))


def _raw_order(fields: list[str]) -> list[str]:
    """Raw field names, the one that tells most first (version before build before channel; sha256 before
    md5)."""
    order = (*_FIELD_ORDER, "sha256", "md5")
    return sorted(set(fields), key=lambda n: (order.index(n) if n in order else 99, n))


def _key(record: Mapping[str, str]) -> str:
    return "version" if "version" in record else "value"


def _primary(record: Mapping[str, str]) -> str | None:
    return record.get("version", record.get("value"))


def describe(category: str, record: Mapping[str, str]) -> str:
    """Human text for one side of an item: `1.26.4 py311h0_0 (conda-forge)`, `1.1.0 editable file:///src`."""
    if category == "conda":
        text = " ".join(v for v in (record.get("version"), record.get("build")) if v)
        return f"{text} ({record['channel']})" if record.get("channel") else text
    if category == "pip":
        text = record.get("version", "")
        if record.get("editable") == "yes":
            text += " editable"
        if record.get("url"):
            text += f" from {record['url']}"
        if record.get("commit"):
            text += f"@{record['commit'][:12]}"
        return text
    if category == "virtual":
        return f"{record.get('version', '')}={record.get('build', '')}"
    if category == "python":  # CPython is the default and goes unsaid
        implementation = record.get("implementation", "cpython")
        return record.get("version", "") + ("" if implementation == "cpython" else f" ({implementation})")
    value = record.get("value", "")
    return value[:16] if category == "fingerprints" and len(value) == 64 else value


def both_manager_hazards(a: Environment, b: Environment) -> list[Difference]:
    """Names installed by both conda and pip (pip shadows conda's copy) on either side: reported, not
    counted."""

    def dual(env: Environment) -> dict[str, str]:
        if "pip" not in map(_MANAGER, env.packages):  # no pip package: no name in both (a scan in C)
            return {}
        conda = {canonical_name(p.name): p for p in env.conda_packages()}
        return {
            p.name: f"conda {conda[p.name].version} + pip {p.version}"
            for p in env.pip_packages()
            if p.name in conda
        }

    da = dual(a)
    db = da if b.packages is a.packages else dual(b)
    return [
        Difference("both-managers", "hazard", n, da.get(n), db.get(n)) for n in sorted(da.keys() | db.keys())
    ]
