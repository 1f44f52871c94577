"""envguard: reproducible conda environments for machine learning.

`%load_ext envguard` in IPython or Jupyter calls `load_ipython_extension` (envguard.notebook).
"""

from __future__ import annotations

from envguard.version import __version__

__all__ = ["__version__", "load_ipython_extension"]


def load_ipython_extension(ipython: object) -> None:
    """`%load_ext envguard`: register `%envguard` and `%%envguard_watch` (envguard.notebook.magics)."""
    # every envguard command imports this package first: the extension (and IPython's magic machinery it
    # uses) loads only when IPython asks for it
    from envguard.notebook import external

    if not external.complete():  # envguard in pipx, its package folder alone on the kernel's path
        external.register(ipython)
        return
    from envguard.notebook.magics import register

    register(ipython)
