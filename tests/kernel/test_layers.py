"""The house stays easy to see: the layers contract holds and no module graph has a cycle (deferred imports
inside functions included, which is where cycles used to hide)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp

from tests.helpers import REPO

PACKAGE = REPO / "envguard"


def test_no_import_cycle_anywhere() -> None:
    """Python runs a package's __init__ before any module in it: importing `a.b.c` imports `a.b` first. A
    cycle through an __init__ that imports its own submodules is as real as a direct one (and grimp's graph
    does not draw those edges), so they are added here."""
    graph = grimp.build_graph("envguard", exclude_type_checking_imports=True)
    for module in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            parts = imported.split(".")
            for depth in range(2, len(parts)):
                package = ".".join(parts[:depth])
                if not module.startswith(package + ".") and module != package:
                    graph.add_import(importer=module, imported=package)
    cycles = []
    for module in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported != module and graph.chain_exists(importer=imported, imported=module):
                chain = graph.find_shortest_chain(importer=imported, imported=module)
                cycles.append(f"{module} -> {' -> '.join(chain or ())}")
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_layers_contract_holds() -> None:
    lint_imports = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint_imports)], cwd=REPO, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "Contracts: 15 kept, 0 broken" in done.stdout  # the layers, each feature's own modules, renderers


def test_no_module_over_400_lines_and_formatter_on() -> None:
    long = {
        str(p.relative_to(REPO)): n
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text().splitlines())) > 400
    }
    assert not long, f"modules over 400 lines: {long}"
    skips = sum(p.read_text().count("# fmt: skip") for p in PACKAGE.rglob("*.py"))
    assert skips < 20, f"{skips} `# fmt: skip` markers: the formatter is effectively off"


def test_every_package_folder_is_a_package() -> None:
    missing = [
        str(d.relative_to(REPO))
        for d in PACKAGE.rglob("*")
        if d.is_dir()
        and d.name != "__pycache__"
        and any(d.glob("*.py"))
        and not (d / "__init__.py").is_file()
    ]
    assert not missing, (
        f"folders without __init__.py (namespace packages hide from the layers contract): {missing}"
    )


def test_tests_never_import_other_test_files() -> None:
    offenders = []
    for path in (REPO / "tests").rglob("test_*.py"):
        for line in path.read_text().splitlines():
            text = line.strip()
            if text.startswith(("from tests.", "import tests.")) and ".test_" in text.split(" import")[0]:
                offenders.append(f"{path.relative_to(REPO)}: {text}")
    assert not offenders, "\n".join(offenders)


def test_the_development_page_names_every_package() -> None:
    layout = (REPO / "docs" / "development.md").read_text()
    packages = sorted(d.name for d in PACKAGE.iterdir() if d.is_dir() and (d / "__init__.py").is_file())
    missing = [name for name in packages if f"`{name}/`" not in layout]
    assert not missing, f"docs/development.md's layout table lacks {missing}"
    assert (REPO / "docs" / "ARCHITECTURE.md").is_file()
