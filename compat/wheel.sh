#!/usr/bin/env bash
# `make compat`, the wheel (issue 37): what `pip install ladder-llm` gives a user without Rust.
#
# Installs the wheel `make wheel` built (target/wheel/dist, or $LADDER_WHEEL) into a fresh venv
# with pip, then, with a PATH that holds only that venv's bin/ and the system's /usr/bin:/bin (no
# cargo, no rustc: checked), runs from the venv's bin/:
#   - `ladder --version`: the version Cargo.toml declares;
#   - `ladder validate` on every example scenario;
#   - `ladder sim` on a free port, and a small ad-hoc ladder against it (2 steps of 12 requests,
#     `--base-url`, exactly as against any OpenAI-compatible server), which must succeed with no
#     error and write summary.csv.
# Also checks that `uvx`-style use works: uv (from PyPI) runs `ladder --version` from the wheel
# in a throwaway environment (`uv tool run --from WHEEL ladder`).
#
# Environment: LADDER_COMPAT_DIR (scratch folder, default target/compat), LADDER_WHEEL_DIR (where
# `make wheel` put the wheel; default $CARGO_TARGET_DIR/wheel/dist, else target/wheel/dist).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCRATCH=${LADDER_COMPAT_DIR:-$ROOT/target/compat}
WHEEL_DIR=${LADDER_WHEEL_DIR:-${CARGO_TARGET_DIR:-$ROOT/target}/wheel/dist}
UV=0.13.8
mkdir -p "$SCRATCH"
SCRATCH=$(cd "$SCRATCH" && pwd)
DIR="$SCRATCH/wheel"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_CACHE_DIR="$SCRATCH/pip-cache"
WHEEL=$(ls -t "$WHEEL_DIR"/ladder_llm-*.whl 2>/dev/null | head -n 1)
[ -n "$WHEEL" ] && [ -f "$WHEEL" ] || { echo "compat: FAIL: no ladder_llm-*.whl in $WHEEL_DIR; run make wheel" >&2; exit 1; }
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' "$ROOT/Cargo.toml" | head -n 1)
SIM_PID=
cleanup() { [ -z "$SIM_PID" ] || { kill "$SIM_PID" 2>/dev/null; wait "$SIM_PID" 2>/dev/null; } || true; }
trap cleanup EXIT
fail() { echo "compat: FAIL: wheel: $*" >&2; exit 1; }

echo "== install $(basename "$WHEEL") into a fresh venv ($DIR/venv)"
rm -rf "$DIR"
mkdir -p "$DIR/work"
python3 -m venv "$DIR/venv"
"$DIR/venv/bin/pip" install --quiet "$WHEEL"
BIN="$DIR/venv/bin"
[ -x "$BIN/ladder" ] || fail "the wheel installed no $BIN/ladder"

# From here on: the venv's bin/ and the system's, nothing of Rust's.
NO_RUST_PATH="$BIN:/usr/bin:/bin"
in_venv() { env -i HOME="$DIR/work" PATH="$NO_RUST_PATH" LANG=C.UTF-8 "$@"; }
for tool in cargo rustc rustup; do
  if in_venv sh -c "command -v $tool" >/dev/null; then fail "$tool is on the test's PATH"; fi
done
echo "no cargo, rustc or rustup on PATH=$NO_RUST_PATH"

got=$(in_venv ladder --version)
echo "ladder --version: $got"
[ "$got" = "ladder $VERSION" ] || fail "ladder --version said '$got', Cargo.toml says $VERSION"

cp -r "$ROOT/scenarios" "$DIR/work/"
(cd "$DIR/work" && in_venv ladder validate scenarios/*.yaml) || fail "ladder validate"

in_venv ladder sim --port 0 >"$DIR/sim.url" 2>"$DIR/sim.log" &
SIM_PID=$!
for _ in $(seq 100); do [ -s "$DIR/sim.url" ] && break; sleep 0.1; done
BASE=$(head -n 1 "$DIR/sim.url")
[ -n "$BASE" ] || fail "ladder sim printed no URL: $(cat "$DIR/sim.log")"
echo "== a small ladder against ladder sim at $BASE, from the venv's bin/"
(cd "$DIR/work" && in_venv ladder run --base-url "$BASE" --model sim-model --ladder 2,4 \
  --requests-per-step 12 --max-tokens 16 --out runs) || fail "ladder run against ladder sim"
SUMMARY=$(ls "$DIR"/work/runs/*/*/summary.csv 2>/dev/null | head -n 1)
[ -n "$SUMMARY" ] || fail "no summary.csv under $DIR/work/runs"
REQUESTS=$(dirname "$SUMMARY")/requests.csv
ok=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "status") c = i; next } $c == "ok" { n++ } END { print n + 0 }' "$REQUESTS")
[ "$ok" -eq 24 ] || fail "$ok of 24 requests succeeded ($REQUESTS)"
echo "24 of 24 requests succeeded: $SUMMARY"

echo "== uv $UV (PyPI): uv tool run --from the wheel ladder --version"
python3 -m venv "$DIR/uv"
"$DIR/uv/bin/pip" install --quiet "uv==$UV"
got=$(env -i HOME="$DIR/work" PATH="$DIR/uv/bin:/usr/bin:/bin" UV_CACHE_DIR="$DIR/uv-cache" \
  UV_TOOL_DIR="$DIR/uv-tools" UV_PYTHON_DOWNLOADS=never \
  uv tool run --offline --python "$(python3 -c 'import sys; print(sys.executable)')" --from "$WHEEL" ladder --version) ||
  fail "uv tool run --from the wheel"
[ "$got" = "ladder $VERSION" ] || fail "uv tool run: ladder --version said '$got'"
echo "uv tool run: $got"
echo "wheel: passed"
