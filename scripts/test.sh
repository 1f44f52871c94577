#!/usr/bin/env bash
# Lint, types and the whole test suite. Run from anywhere; extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== ruff check"; python -m ruff check envguard tests scripts
echo "== ruff format --check"; python -m ruff format --check envguard tests scripts
echo "== mypy --strict"; python -m mypy envguard
echo "== lint-imports (layers: cli -> features -> engine/sources -> formats -> prefix -> machine -> kernel)"
"$(dirname "$(command -v python)")/lint-imports"
echo "== pytest"; python -m pytest "$@"
