#!/usr/bin/env bash
# Lint, types and the whole test suite. Run from anywhere; extra arguments go to pytest.
#   scripts/test.sh --quick [ARGS]   the inner loop: lint and the import layers (no mypy) and the tests
#                                    not marked slow that build no environment (pytest --quick)
set -euo pipefail
cd "$(dirname "$0")/.."
quick=""
if [ "${1:-}" = "--quick" ]; then
  quick="--quick"
  shift
fi
echo "== ruff check"; python -m ruff check envguard tests scripts
echo "== ruff format --check"; python -m ruff format --check envguard tests scripts
if [ -z "$quick" ]; then
  echo "== mypy --strict"; python -m mypy envguard
fi
echo "== lint-imports (layers: cli -> features -> engine/sources -> formats -> prefix -> machine -> kernel)"
"$(dirname "$(command -v python)")/lint-imports"
echo "== pytest${quick:+ --quick}"; python -m pytest ${quick:+"$quick"} "$@"
