"""Read environment.yml the way real files are written: CRLF, UTF-16 BOM, several `pip:` blocks,
`channel::pkg`, build globs, pip options, `# [linux]` selectors, `!!python/tuple` tags, trailing whitespace,
unknown keys.

The YAML is composed (not constructed) so every dependency keeps its line number for error messages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envguard import textio
from envguard.channels import normalize, remember, strip_credentials
from envguard.errors import BadInputError
from envguard.machine.platform import current_platform
from envguard.model import Environment, RequestedSpec, make_environment
from envguard.specs import is_pip_option, parse_conda, pip_name
from envguard.textio import read_text

# Bounds far above any real environment.yml (the largest in conda-forge's feedstocks are a few KB, ~200
# dependencies): a 20 MB file with a million dependencies was composed into ~8 GB of nodes and OOM-killed.
MAX_BYTES = 1024 * 1024
MAX_DEPENDENCIES = 10_000
KNOWN_KEYS = frozenset({"name", "channels", "dependencies", "prefix", "variables", "platforms", "category"})
_SELECTOR = re.compile(r"#\s*\[([^\]]+)\]\s*$")
_JINJA = re.compile(r"\{%|\{\{")


@dataclass
class _Collected:
    conda: list[RequestedSpec] = field(default_factory=list)
    pip: list[RequestedSpec] = field(default_factory=list)
    pip_options: list[str] = field(default_factory=list)
    pip_blocks: list[int] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def read(path: Path, platform: str | None = None) -> Environment:
    """Parse an environment.yml into a spec-only Environment (kind `environment.yml`)."""
    return parse(read_text(path), str(path), platform=platform)


def parse(text: str, origin: str = "environment.yml", platform: str | None = None) -> Environment:
    """Pure parser: text -> Environment. `platform` decides `# [selector]` lines (default: this machine)."""
    target = platform or current_platform()
    if len(text) > MAX_BYTES:
        raise BadInputError(
            f"{origin}: {len(text) / 1e6:.1f} MB is larger than an environment.yml may be "
            f"({MAX_BYTES // 1024} KiB, {MAX_DEPENDENCIES:,} dependencies); split it or lock it in parts"
        )
    jinja = _JINJA.search(text)
    if jinja:
        line = text[: jinja.start()].count("\n") + 1
        raise BadInputError(
            f"{origin}:{line}: Jinja template syntax ({{% %}} / {{{{ }}}}) is not plain environment.yml; "
            "render it "
            "first (e.g. `conda devenv --print`) and point envguard at the result"
        )
    text, applied = apply_selectors(text, target)
    root = _compose(text, origin)
    mapping = _mapping(root, origin)
    found = _Collected()
    if applied:
        found.warnings.append(f"{origin}: applied {applied} `# [selector]` line(s) for platform {target}")
    for key in sorted(set(mapping) - KNOWN_KEYS):
        found.warnings.append(
            f"{origin}:{mapping[key][0].start_mark.line + 1}: unknown top-level key {key!r} ignored"
        )
    name = _scalar(mapping.get("name"), origin, "name")
    channels = tuple(
        normalize(remember(c)) for c in _string_list(mapping.get("channels"), origin, "channels")
    )
    platforms = tuple(_string_list(mapping.get("platforms"), origin, "platforms"))
    _dependencies(mapping.get("dependencies"), origin, found)
    if len(found.pip_blocks) > 1:
        lines = ", ".join(str(n) for n in found.pip_blocks)
        found.warnings.append(
            f"{origin}: {len(found.pip_blocks)} `pip:` blocks (lines {lines}); envguard keeps them all, "
            "but conda keeps only the last one — merge them into one"
        )
    python = _python_version(found.conda)
    return make_environment(
        kind="environment.yml",
        source=origin,
        name=name.strip() if name else None,
        platform=platform,
        python=python,
        channels=tuple(c for c in channels if c),
        requested=tuple(found.conda + found.pip),
        pip_options=tuple(found.pip_options),
        platforms=platforms,
        warnings=tuple(found.warnings),
    )


def apply_selectors(text: str, platform: str) -> tuple[str, int]:
    """Drop lines whose conda-build style `# [expr]` selector is false for `platform`; return (text,
    count)."""
    names = selector_namespace(platform)
    out: list[str] = []
    applied = 0
    for line in text.split("\n"):
        match = _SELECTOR.search(line)
        if match and not line.lstrip().startswith("#"):
            applied += 1
            if not _evaluate(match.group(1), names):
                out.append("")  # keep line numbers stable
                continue
            line = line[: match.start()].rstrip()
        out.append(line)
    return "\n".join(out), applied


def selector_namespace(platform: str) -> dict[str, bool]:
    """The booleans conda-build selectors use (linux, osx, win, unix, x86_64, arm64, aarch64...)."""
    system, _, arch = platform.partition("-")
    return {
        "linux": system == "linux",
        "osx": system == "osx",
        "win": system == "win",
        "unix": system in ("linux", "osx"),
        "x86_64": arch == "64",
        "x86": arch in ("64", "32"),
        "arm64": arch == "arm64",
        "aarch64": arch == "aarch64",
        "ppc64le": arch == "ppc64le",
        "linux64": platform == "linux-64",
        "win64": platform == "win-64",
        "osx64": platform == "osx-64",
    }


def _evaluate(expr: str, names: dict[str, bool]) -> bool:
    tokens = re.findall(r"\(|\)|[A-Za-z_][A-Za-z0-9_]*", expr)
    allowed = set(names) | {"and", "or", "not", "(", ")"}
    if not tokens or any(t not in allowed for t in tokens):
        return True  # an unknown selector keeps the line, like a comment
    program = " ".join(t if t in ("and", "or", "not", "(", ")") else str(names[t]) for t in tokens)
    try:
        return bool(eval(program, {"__builtins__": {}}, {}))
    except (SyntaxError, RecursionError, MemoryError):  # `not not ...` 5,000 deep cannot compile
        return True


def _compose(text: str, origin: str) -> Any:
    import yaml

    try:
        return textio.compose_yaml(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = exc.problem or exc.context or "syntax error"
        raise BadInputError(f"{origin}{line}: malformed YAML ({problem}); fix the file") from exc
    except yaml.YAMLError as exc:
        raise BadInputError(f"{origin}: malformed YAML ({textio.yaml_reason(exc)}); fix the file") from exc


def _mapping(root: Any, origin: str) -> dict[str, tuple[Any, Any]]:
    import yaml

    if root is None:
        raise BadInputError(f"{origin}: empty file; an environment.yml needs at least `dependencies:`")
    if not isinstance(root, yaml.MappingNode):
        raise BadInputError(
            f"{origin}:{root.start_mark.line + 1}: expected a mapping with name/channels/dependencies"
        )
    result: dict[str, tuple[Any, Any]] = {}
    for key, value in root.value:
        result[str(key.value).strip()] = (key, value)
    return result


def _scalar(entry: tuple[Any, Any] | None, origin: str, key: str) -> str | None:
    import yaml

    if entry is None:
        return None
    node = entry[1]
    if not isinstance(node, yaml.ScalarNode):
        raise BadInputError(f"{origin}:{node.start_mark.line + 1}: `{key}` must be a single value")
    return str(node.value) if node.value not in ("", "null", "~") else None


def _string_list(entry: tuple[Any, Any] | None, origin: str, key: str) -> list[str]:
    import yaml

    if entry is None:
        return []
    node = entry[1]
    if isinstance(node, yaml.ScalarNode) and node.value in ("", "null", "~"):
        return []
    if not isinstance(node, yaml.SequenceNode):
        raise BadInputError(f"{origin}:{node.start_mark.line + 1}: `{key}` must be a list")
    values = []
    for item in node.value:
        if not isinstance(item, yaml.ScalarNode):
            raise BadInputError(f"{origin}:{item.start_mark.line + 1}: each `{key}` entry must be a string")
        values.append(str(item.value).strip())
    return [v for v in values if v]


def _dependencies(entry: tuple[Any, Any] | None, origin: str, found: _Collected) -> None:
    import yaml

    if entry is None:
        found.warnings.append(f"{origin}: no `dependencies:` list")
        return
    node = entry[1]
    if isinstance(node, yaml.ScalarNode) and node.value in ("", "null", "~"):
        return
    if not isinstance(node, yaml.SequenceNode):
        raise BadInputError(f"{origin}:{node.start_mark.line + 1}: `dependencies` must be a list")
    if len(node.value) > MAX_DEPENDENCIES:
        raise BadInputError(
            f"{origin}: {len(node.value):,} dependencies, more than an environment.yml may list "
            f"({MAX_DEPENDENCIES:,}); split it or lock it in parts"
        )
    for item in node.value:
        line = item.start_mark.line + 1
        if isinstance(item, yaml.ScalarNode):
            _conda_item(str(item.value), f"{origin}:{line}", found)
        elif isinstance(item, yaml.MappingNode):
            _mapping_item(item, origin, found)
        else:
            raise BadInputError(f"{origin}:{line}: a dependency must be a spec string or a `pip:` list")


def _conda_item(value: str, where: str, found: _Collected) -> None:
    text = value.strip()
    if not text:
        return
    parse_conda(text, where)  # validates; raises a one-line BadInputError naming file:line
    found.conda.append(RequestedSpec("conda", text))


def _mapping_item(item: Any, origin: str, found: _Collected) -> None:
    import yaml

    for key, value in item.value:
        line = key.start_mark.line + 1
        if str(key.value).strip() != "pip":
            raise BadInputError(
                f"{origin}:{line}: unsupported dependency mapping {key.value!r}; only `pip:` is allowed"
            )
        found.pip_blocks.append(line)
        if isinstance(value, yaml.ScalarNode) and value.value in ("", "null", "~"):
            continue
        if not isinstance(value, yaml.SequenceNode):
            raise BadInputError(f"{origin}:{line}: `pip:` must be a list of requirement lines")
        for entry in value.value:
            if not isinstance(entry, yaml.ScalarNode):
                raise BadInputError(
                    f"{origin}:{entry.start_mark.line + 1}: a pip requirement must be a string"
                )
            _pip_item(str(entry.value), f"{origin}:{entry.start_mark.line + 1}", found)


def _pip_item(value: str, where: str, found: _Collected) -> None:
    text = strip_credentials(value.strip()) if "://" in value else value.strip()
    if not text:
        return
    if is_pip_option(text):
        found.pip_options.append(_strip_option_credentials(text))
        return
    if pip_name(text) is None and not text.startswith(("-r", "-e", "-c")) and "://" not in text:
        raise BadInputError(
            f"{where}: invalid pip requirement {text!r}; use `name==version` or a pip option line"
        )
    found.pip.append(RequestedSpec("pip", text))


def _strip_option_credentials(text: str) -> str:
    option, _, rest = text.partition(" ")
    return f"{option} {strip_credentials(rest.strip())}" if rest else option


def _python_version(specs: list[RequestedSpec]) -> str | None:
    for spec in specs:
        parsed = parse_conda(spec.spec)
        if parsed.name == "python" and parsed.version:
            return parsed.version.lstrip("=").rstrip(".*") or None
    return None
