#!/usr/bin/env bash
# CI: `envguard verify` end to end on the fixture channel, on a machine without conda or a GPU.
#
#   scripts/ci_verify.sh            # uses `python` and `envguard` from PATH (the activated .venv)
#
# 1. build the fixture channels (real .conda packages, indexed by rattler) in a temp dir;
# 2. `envguard create -f environment.yml` (a driver simulated with CONDA_OVERRIDE_CUDA, as conda does) makes
#    pytorch2.1-cuda118-py311 and writes conda-lock.yml beside the environment.yml;
# 3. `envguard verify` must PASS on that lock (also offline from a --pkgs-dir copy, with a Markdown report);
# 4. and must FAIL (exit 1), naming the package, on a lock whose hash was edited and on a channel archive that
#    was replaced after locking.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python}
ENVGUARD=${ENVGUARD:-envguard}
work=$(mktemp -d "${TMPDIR:-/tmp}/envguard-ci-verify.XXXXXX")
trap 'rm -rf "$work"' EXIT
export HOME="$work/home" XDG_CACHE_HOME="$work/home/.cache" ENVGUARD_CACHE_DIR="$work/home/.cache/envguard"
unset CONDA_PREFIX CONDA_ENVS_PATH CONDA_ENVS_DIRS ENVGUARD_BACKEND CONDA_OVERRIDE_CUDA CONDA_OVERRIDE_GLIBC || true
mkdir -p "$HOME" "$work/project"
step() { printf '\n== %s\n' "$*"; }
fail() { printf 'ci_verify: FAILED: %s\n' "$*" >&2; exit 1; }

step "fixture channels"
"$PYTHON" scripts/fixture_channel.py "$work/channels"
cat > "$work/project/environment.yml" <<EOF
name: ci-verify
channels:
  - file://$work/channels/pytorch
  - file://$work/channels/forge
dependencies:
  - python=3.11
  - pytorch=2.1=*cuda11.8*
  - numpy
  - six
EOF
cd "$work/project"

step "create refuses a CUDA build without a driver (exit 2)"
set +e; "$ENVGUARD" create -f environment.yml --backend embedded; code=$?; set -e
[ "$code" -eq 2 ] || fail "create without a driver exited $code, expected 2"

step "create with CONDA_OVERRIDE_CUDA=12.4"
CONDA_OVERRIDE_CUDA=12.4 "$ENVGUARD" create -f environment.yml --backend embedded
[ -d "$HOME/.conda/envs/pytorch2.1-cuda118-py311/conda-meta" ] || fail "pytorch2.1-cuda118-py311 was not created"
grep -qx "$HOME/.conda/envs/pytorch2.1-cuda118-py311" "$HOME/.conda/environments.txt" || fail "not registered"
[ -f conda-lock.yml ] || fail "no conda-lock.yml beside environment.yml"

step "verify the intact lock (exit 0)"
"$ENVGUARD" verify --lock conda-lock.yml --markdown -o verify-report.md
cat verify-report.md

step "verify offline from a package cache"
mkdir -p pkgs && find "$work/channels/forge" "$work/channels/pytorch" -name '*.conda' -exec cp {} pkgs/ \;
"$PYTHON" - "$work/channels" <<'EOF'
import pathlib, sys
lock = pathlib.Path("conda-lock.yml")
lock.with_name("offline-lock.yml").write_text(
    lock.read_text().replace(pathlib.Path(sys.argv[1]).as_uri(), "https://conda.example.invalid"))
EOF
set +e; "$ENVGUARD" verify --lock offline-lock.yml --pkgs-dir pkgs --json > offline.json; code=$?; set -e
[ "$code" -eq 0 ] || { cat offline.json; fail "offline verify exited $code, expected 0"; }
grep -q '"passed": true' offline.json || fail "offline verify did not pass"

step "verify a lock whose numpy hash was edited (exit 1, names numpy)"
"$PYTHON" - <<'EOF'
import pathlib, re
lock = pathlib.Path("conda-lock.yml")
text = lock.read_text()
start = text.index("- name: numpy\n")
at = text.index("sha256: ", start) + len("sha256: ")
pathlib.Path("tampered-lock.yml").write_text(text[:at] + "ab" * 32 + text[at + 64:])
EOF
set +e; "$ENVGUARD" verify --lock tampered-lock.yml > tampered.txt; code=$?; set -e
cat tampered.txt
[ "$code" -eq 1 ] || fail "tampered lock: exit $code, expected 1"
grep -q "archive hash does not match the lock: numpy" tampered.txt || fail "tampered lock: numpy not named"

step "verify after a channel archive was replaced (exit 1, names six)"
cd "$OLDPWD"
"$PYTHON" - "$work/channels/forge" <<'EOF'
import sys
from pathlib import Path
sys.path.insert(0, "scripts")
import fixture_channel
recipe = next(r for r in fixture_channel.load_recipes()[0] if r.name == "six")
recipe.files = {"site-packages/six/__init__.py": "raise SystemExit('replaced')\n"}
fixture_channel.build_package(recipe, Path(sys.argv[1]))
EOF
cd "$work/project"
set +e; "$ENVGUARD" verify --lock conda-lock.yml > replaced.txt; code=$?; set -e
cat replaced.txt
[ "$code" -eq 1 ] || fail "replaced archive: exit $code, expected 1"
grep -q "archive hash does not match the lock: six" replaced.txt || fail "replaced archive: six not named"

printf '\nci_verify: OK\n'
