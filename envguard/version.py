"""envguard's version, in a module of its own: every module that writes it imports this one, never the root
package, whose `load_ipython_extension` reaches the notebook extension (and so most of envguard)."""

from __future__ import annotations

__version__ = "0.1.0"
