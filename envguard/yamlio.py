"""Reading YAML: PyYAML's C loader when it was built with libyaml (several times faster), else the pure-Python
one, chosen once; safe loading only. Every YAML envguard reads (environment.yml, conda-lock.yml, condarc) goes
through here. Writing is envguard.formats.yaml.

Aliases are shared nodes, so a "billion laughs" document is small to parse but enormous once anything walks
it: a document whose alias-expanded node count passes MAX_NODES is refused (yaml.YAMLError) before any value
is built."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

MAX_NODES = 2_000_000  # a 5,000-package conda-lock.yml expands to about 150,000 nodes


@lru_cache(maxsize=1)
def loader() -> Any:
    """yaml.CSafeLoader when available, else yaml.SafeLoader."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load(text: str) -> Any:
    """Plain data from YAML text (yaml.YAMLError on malformed input or an alias bomb)."""
    import yaml

    instance = loader()(text)
    try:
        node = instance.get_single_node()
        if node is None:
            return None
        if "&" in text:  # no anchor, no alias: nothing can expand (and the walk would cost ~1x the parse)
            check_size(node)
        return instance.construct_document(node)
    except RecursionError as exc:
        raise yaml.YAMLError("nested too deeply to read") from exc
    finally:
        instance.dispose()


def compose(text: str) -> Any:
    """The node tree (with line numbers) of YAML text (yaml.YAMLError on malformed input or an alias
    bomb)."""
    import yaml

    try:
        node = yaml.compose(text, Loader=loader())
    except RecursionError as exc:
        raise yaml.YAMLError("nested too deeply to read") from exc
    if node is not None and "&" in text:
        check_size(node)
    return node


def reason(exc: Exception) -> str:
    """A YAML error in one line for messages (its first line, else its class name)."""
    text = str(exc).strip().split("\n", 1)[0].strip()
    return text[:200] if text else exc.__class__.__name__


def check_size(root: Any) -> None:
    """Refuse a node tree whose alias-expanded size passes MAX_NODES (each shared node counted once per
    use, computed once per node, iteratively so deep nesting cannot exhaust the stack)."""
    import yaml

    sizes: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if key in sizes and not done:
            continue
        children = _children(node)
        if not done:
            sizes[key] = -1  # in progress: a recursive alias refers back here
            stack.append((node, True))
            stack.extend((child, False) for child in children if id(child) not in sizes)
            continue
        total = 1 + sum(max(sizes.get(id(child), 1), 1) for child in children)
        if total > MAX_NODES:
            raise yaml.YAMLError(
                f"document expands to more than {MAX_NODES:,} nodes through aliases (an alias bomb?); "
                "refusing to read it"
            )
        sizes[key] = total


def _children(node: Any) -> list[Any]:
    value = getattr(node, "value", None)
    if not isinstance(value, list):
        return []
    out: list[Any] = []
    for item in value:
        if isinstance(item, tuple):
            out.extend(item)
        else:
            out.append(item)
    return out
