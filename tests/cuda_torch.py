"""The CUDA build of torch as a machine without a GPU sees it, where the wheel cannot be installed (its
nvidia-* dependencies are gigabytes): a venv whose torch is this venv's CPU build with the CUDA wheel's
identity.

What differs between the two builds on such a machine is only what they say about themselves, and that is what
the stand-in changes: `torch.__version__` is `2.13.0+cu130` and `torch.version.cuda` is `13.0` (the
wheel's `torch/version.py`), and its dist-info is the one PyPI's manylinux wheel installs (`Version: 2.13.0`,
no local label, with its `Requires-Dist` on the nvidia-*-cu13 wheels). `torch.cuda.is_available()` is False,
as the real CUDA build answers without a GPU. Every verdict under test runs envguard's real code on these
facts.

The venv holds a link to every other entry of this venv's site-packages, so it is complete on its own (a venv
reaching it through a .pth file, as tests/smoke's numpy1_env does, finds torch's dependencies there too).
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

VERSION = "2.13.0"
LOCAL = "cu130"
CUDA = "13.0"
# PyPI's torch-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl METADATA, Requires-Dist (read from pip's report)
REQUIRES = (
    "filelock",
    "typing-extensions>=4.10.0",
    "setuptools>=77.0.3",
    "sympy>=1.13.3",
    "networkx>=2.5.1",
    "jinja2",
    "fsspec>=0.8.5",
    "cuda-toolkit[cublas,cudart,cufft,cufile,cupti,curand,cusolver,cusparse,nvjitlink,nvrtc,nvtx]==13.0.3; "
    'platform_system == "Linux"',
    'cuda-bindings<14,>=13.0.3; platform_system == "Linux" and python_version < "3.15"',
    'nvidia-cudnn-cu13==9.20.0.48; platform_system == "Linux"',
    'nvidia-cusparselt-cu13==0.8.1; platform_system == "Linux"',
    'nvidia-nccl-cu13==2.29.7; platform_system == "Linux"',
    'nvidia-nvshmem-cu13==3.4.5; platform_system == "Linux"',
    'triton==3.7.1; platform_system == "Linux" and python_version < "3.15"',
)


def build(root: Path) -> Path:
    """Make the stand-in venv at `root`; returns its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    site = Path(sysconfig.get_paths(vars={"base": str(root), "platbase": str(root)})["purelib"])
    here = Path(sysconfig.get_paths()["purelib"])
    import torch

    real = Path(torch.__file__).parent
    for entry in here.iterdir():
        if entry.name == "torch" or (entry.name.startswith("torch-") and entry.name.endswith(".dist-info")):
            continue
        (site / entry.name).symlink_to(entry)
    overlay = site / "torch"
    overlay.mkdir()
    for entry in real.iterdir():
        if entry.name not in ("version.py", "__pycache__"):
            (overlay / entry.name).symlink_to(entry)
    text = (real / "version.py").read_text()
    text = text.replace(f"__version__ = '{torch.__version__}'", f"__version__ = '{VERSION}+{LOCAL}'")
    text = text.replace("cuda: Optional[str] = None", f"cuda: Optional[str] = '{CUDA}'")
    assert f"'{VERSION}+{LOCAL}'" in text and f"'{CUDA}'" in text, "torch/version.py changed its layout"
    (overlay / "version.py").write_text(text)
    dist = site / f"torch-{VERSION}.dist-info"
    dist.mkdir()
    requires = "".join(f"Requires-Dist: {r}\n" for r in REQUIRES)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.4\nName: torch\nVersion: {VERSION}\n{requires}")
    (dist / "INSTALLER").write_text("pip\n")
    (dist / "WHEEL").write_text(
        "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp311-cp311-manylinux_2_28_x86_64\n"
    )
    (dist / "top_level.txt").write_text("torch\n")
    (dist / "RECORD").write_text(f"torch/version.py,,\ntorch-{VERSION}.dist-info/METADATA,,\n")
    return root / "bin" / "python"


def env_for(python: Path) -> dict[str, str]:
    """The environment to run the stand-in's tests in: its bin first on PATH, no VIRTUAL_ENV of ours."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"
    return env
