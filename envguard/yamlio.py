"""Reading YAML: PyYAML's C loader when it was built with libyaml (several times faster), else the pure-Python
one, chosen once; safe loading only. Every YAML envguard reads (environment.yml, conda-lock.yml, condarc) goes
through here. Writing is envguard.formats.yaml."""

from __future__ import annotations

from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1)
def loader() -> Any:
    """yaml.CSafeLoader when available, else yaml.SafeLoader."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load(text: str) -> Any:
    """Plain data from YAML text (yaml.YAMLError on malformed input)."""
    import yaml

    return yaml.load(text, Loader=loader())


def compose(text: str) -> Any:
    """The node tree (with line numbers) of YAML text."""
    import yaml

    return yaml.compose(text, Loader=loader())
