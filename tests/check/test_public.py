"""check's public names (what sync and verify import from `envguard.check`) resolve, and load nothing until
used: the fast path imports a module of the package, which runs its __init__ first."""

from __future__ import annotations

import subprocess
import sys

import envguard.check
from tests.helpers import REPO


def test_every_public_name_resolves_to_its_module() -> None:
    assert envguard.check.__all__ == sorted(envguard.check.PUBLIC)
    for name, module in envguard.check.PUBLIC.items():
        found = getattr(envguard.check, name)
        assert found.__module__ == f"envguard.check.{module}", name


def test_importing_the_package_loads_none_of_the_full_check() -> None:
    code = "import sys, envguard.check.fast; print(sorted(sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    loaded = eval(done.stdout)
    assert "envguard.check.run" not in loaded and "envguard.check.report" not in loaded, loaded
