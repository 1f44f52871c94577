"""PyYAML's own reading of a text (its C loader where built): what envguard's YAML readers are held to."""

from __future__ import annotations

import yaml


def pyyaml(text: str) -> tuple[bool, object]:
    """(True, the document) where PyYAML's SafeLoader reads the text, else (False, None)."""
    try:
        return True, yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return False, None
