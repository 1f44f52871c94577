"""Register an environment as a Jupyter kernel: `<jupyter data dir>/kernels/<name>/kernel.json` pointing at
the environment's own python, as `python -m ipykernel install --user --name NAME` would.

Where jupyter_client is installed beside envguard, its KernelSpecManager installs the spec (Jupyter's own
rules decide the folder); otherwise envguard writes the same kernel.json itself, into the data dir
jupyter_core would pick (`jupyter_data_dir()` where jupyter_core alone is installed, else its rules restated
in `own_data_dir`, tested against jupyter_core).
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from pathlib import Path

from envguard.atomic import write_text
from envguard.prefix.probe import interpreter


def data_dir() -> Path:
    """Jupyter's user data dir: jupyter_core's answer where it is installed, else the same rules (
    `$JUPYTER_DATA_DIR`, else the platform default)."""
    try:
        from jupyter_core.paths import jupyter_data_dir
    except ImportError:
        return own_data_dir()
    return Path(jupyter_data_dir())


def own_data_dir() -> Path:
    """jupyter_core's `jupyter_data_dir()` rules without jupyter_core."""
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


def spec_text(spec: dict[str, object]) -> str:
    """kernel.json as written, by either path."""
    return json.dumps(spec, indent=1) + "\n"


def install_kernelspec(prefix: Path, name: str) -> tuple[Path, str | None]:
    """Install the kernelspec; return its folder and a warning when ipykernel is missing from the
    environment."""
    text = spec_text(kernel_spec(interpreter(prefix), name, prefix))
    folder = install_with_jupyter(text, kernel_name(name))
    if folder is None:
        folder = write_own(text, kernel_name(name))
    warning = None
    if not _has_ipykernel(prefix):
        warning = (
            f"ipykernel is not installed in {name}; the Jupyter kernel will not start until you add it "
            f"(e.g. `conda install -p {prefix} ipykernel`)"
        )
    return folder, warning


def install_with_jupyter(text: str, name: str) -> Path | None:
    """Install through jupyter_client's KernelSpecManager (user scope, replacing an older spec); None when
    jupyter_client is not installed."""
    try:
        from jupyter_client.kernelspec import KernelSpecManager
    except ImportError:
        return None
    with tempfile.TemporaryDirectory(prefix="envguard-kernel-") as tmp:
        source = Path(tmp) / name
        source.mkdir()
        (source / "kernel.json").write_text(text, encoding="utf-8")
        return Path(KernelSpecManager().install_kernel_spec(str(source), kernel_name=name, user=True))


def write_own(text: str, name: str) -> Path:
    """The fallback: write `<data dir>/kernels/<name>/kernel.json` atomically."""
    folder = data_dir() / "kernels" / name
    write_text(folder / "kernel.json", text)
    return folder


def _has_ipykernel(prefix: Path) -> bool:
    if any((prefix / "conda-meta").glob("ipykernel-*.json")):
        return True
    return any(prefix.glob("lib/python3*/site-packages/ipykernel-*.dist-info")) or any(
        prefix.glob("Lib/site-packages/ipykernel-*.dist-info")
    )
