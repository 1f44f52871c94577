"""Register an environment as a Jupyter kernel: `<jupyter data dir>/kernels/<name>/kernel.json` pointing at
the environment's own python, written exactly as `python -m ipykernel install --user --name NAME` would."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from envguard.atomic import write_text


def data_dir() -> Path:
    """Jupyter's user data dir: `$JUPYTER_DATA_DIR`, else the platform default jupyter_core uses."""
    explicit = os.environ.get("JUPYTER_DATA_DIR")
    if explicit:
        return Path(explicit).expanduser()
    home = Path.home()
    if sys.platform == "darwin":
        return home / "Library" / "Jupyter"
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming") / "jupyter"
    return Path(os.environ.get("XDG_DATA_HOME") or home / ".local" / "share") / "jupyter"


def kernel_name(name: str) -> str:
    """Jupyter kernel names are lower-case `[a-z0-9._-]`."""
    return re.sub(r"[^a-z0-9._-]", "-", name.lower()) or "envguard"


def kernel_spec(python: Path, name: str, prefix: Path) -> dict[str, object]:
    """The kernel.json content (ipykernel's own layout, plus where the environment lives)."""
    return {
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": f"Python ({name})",
        "language": "python",
        "metadata": {"debugger": True, "envguard": {"prefix": str(prefix)}},
    }


def install_kernelspec(prefix: Path, name: str) -> tuple[Path, str | None]:
    """Write the kernelspec; return its folder and a warning when ipykernel is missing from the
    environment."""
    from envguard.prefix.probe import interpreter

    python = interpreter(prefix)
    folder = data_dir() / "kernels" / kernel_name(name)
    write_text(folder / "kernel.json", json.dumps(kernel_spec(python, name, prefix), indent=1) + "\n")
    warning = None
    if not _has_ipykernel(prefix):
        warning = (
            f"ipykernel is not installed in {name}; the Jupyter kernel will not start until you add it "
            f"(e.g. `conda install -p {prefix} ipykernel`)"
        )
    return folder, warning


def _has_ipykernel(prefix: Path) -> bool:
    if any((prefix / "conda-meta").glob("ipykernel-*.json")):
        return True
    return any(prefix.glob("lib/python3*/site-packages/ipykernel-*.dist-info")) or any(
        prefix.glob("Lib/site-packages/ipykernel-*.dist-info")
    )
