"""envguard's version, and how this envguard was installed, in a module of its own: every module that writes
the version imports this one, never the root package, whose `load_ipython_extension` reaches the notebook
extension (and so most of envguard)."""

from __future__ import annotations

import sys
from pathlib import Path

__version__ = "0.1.0"
DISTRIBUTION = "conda-envguard"


def install_line(extra: str) -> str:
    """The command that adds envguard's optional `extra` (`attest`, `plot`, `gpu`) the way this envguard was
    installed: `pipx install --force` where pipx made its venv, else pip with this interpreter; from the
    folder or URL it was installed from (direct_url.json) where that is known, else by name."""
    import importlib.metadata
    import json
    import shlex
    from urllib.parse import unquote, urlsplit

    source, editable = DISTRIBUTION, False
    # the installed distribution that records where it came from (an editable install's source tree holds
    # an egg-info without that record, found first on the path)
    found = [d.read_text("direct_url.json") for d in importlib.metadata.distributions(name=DISTRIBUTION)]
    direct = next((text for text in found if text), None)
    if not found:  # run from a source tree that is not installed
        tree = Path(__file__).resolve().parents[1].as_uri()
        direct = json.dumps({"url": tree, "dir_info": {"editable": True}})
    if direct:
        try:
            record = json.loads(direct)
            url = str(record["url"])
            editable = bool(record.get("dir_info", {}).get("editable"))
        except (ValueError, KeyError, TypeError, AttributeError):
            url = ""
        parts = urlsplit(url)
        if parts.scheme == "file":
            source = unquote(parts.path)
        elif url:
            source = f"{DISTRIBUTION} @ {url}"
    spec = f"{source}[{extra}]" if "@" not in source else source.replace(" @", f"[{extra}] @", 1)
    if (Path(sys.prefix) / "pipx_metadata.json").is_file():  # a venv pipx made and keeps
        return f"pipx install --force {'--editable ' if editable else ''}{shlex.quote(spec)}"
    return f"{shlex.quote(sys.executable)} -m pip install {'-e ' if editable else ''}{shlex.quote(spec)}"
