#!/usr/bin/env bash
# `make compat`: a third-party gateway's rate limits named by ladder (issue 49).
#
# Puts the LiteLLM proxy in front of `ladder sim` (fast, no limits of its own) and drives a
# ladder through it (compat/litellm-limits.yaml) once per limit LiteLLM enforces:
#   - a key's tpm_limit, rpm_limit and max_parallel_requests (LiteLLM's parallel-request
#     limiter, the one that enforces virtual keys' limits);
#   - a deployment's tpm, rpm and otpm (`router_settings.optional_pre_call_checks:
#     [enforce_model_rate_limits]`).
# Each run must find the rate-limit wall, named from LiteLLM's headers and bodies: findings.json's
# wall kind and limit, every 429 in requests.csv with that limit_kind, and the printed sentence
# naming the rule ("Rate-limit wall at 4 streams: … (tokens per minute, limit 2.8k; …").
#
# Virtual keys live in LiteLLM's database: the script starts its own PostgreSQL (Debian's
# package; `.ci/run` installs it) on 127.0.0.1 and LiteLLM with DATABASE_URL. LiteLLM's database
# layer is Prisma (the PyPI package `prisma`), which downloads its engines from Prisma's own
# host at first use; where that host cannot be reached LiteLLM exits, the script says why (the
# URL) and gives the same limits to fixed keys through a custom auth hook
# (compat/litellm_key_limits.py), which the same limiter counts. docs/compat.md has what was seen.
# LiteLLM comes from compat/run.sh's venv when it is there, else from its own.
#
# Environment: LADDER_COMPAT_DIR (scratch folder, default target/compat), LADDER (the binary,
# default target/release/ladder).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCRATCH=${LADDER_COMPAT_DIR:-$ROOT/target/compat}
LADDER=${LADDER:-$ROOT/target/release/ladder}
LITELLM_PIN="litellm[proxy]==1.108.7"
# LiteLLM 1.108.7 asks for prisma>=0.11,<1.0 for its database ([extra-proxy], not [proxy]).
PRISMA_PIN="prisma==0.15.0"
mkdir -p "$SCRATCH"
SCRATCH=$(cd "$SCRATCH" && pwd)
export PIP_CACHE_DIR="$SCRATCH/pip-cache" XDG_CACHE_HOME="$SCRATCH/cache" PIP_DISABLE_PIP_VERSION_CHECK=1
# Prisma's CLI (from npm) and its engines stay in the scratch folder too.
export PRISMA_HOME_DIR="$SCRATCH/cache/prisma-python" npm_config_cache="$SCRATCH/cache/npm"
[ -x "$LADDER" ] || { echo "compat: $LADDER not found; run make build" >&2; exit 1; }
VENV="$SCRATCH/venv"
if [ ! -x "$VENV/bin/litellm" ]; then
  VENV="$SCRATCH/litellm-venv"
  if [ "$(cat "$VENV/.requirements" 2>/dev/null)" != "$LITELLM_PIN" ]; then
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet "$LITELLM_PIN"
    echo "$LITELLM_PIN" >"$VENV/.requirements"
  fi
fi
PY="$VENV/bin/python"
"$PY" -c 'import prisma' 2>/dev/null || "$PY" -m pip install --quiet "$PRISMA_PIN"
WORK="$SCRATCH/litellm-limits"
rm -rf "$WORK" && mkdir -p "$WORK"
PIDS=()
PGDATA_DIR=""
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ -n "$PGDATA_DIR" ]; then
    as_pg "$PG_BIN/pg_ctl" -D "$PGDATA_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$PGDATA_DIR"
  fi
}
trap cleanup EXIT
FAILED=0
PASSED=0
fail() { echo "compat: litellm-limits: FAIL: $*" >&2; FAILED=$((FAILED + 1)); }
free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# wait_ready URL LOG PID: 0 when URL answers 200; 1 when the server exits or 240 s pass.
wait_ready() {
  for _ in $(seq 1 480); do
    if ! kill -0 "$3" 2>/dev/null; then return 1; fi
    if curl -fsS -o /dev/null "$1" 2>/dev/null; then return 0; fi
    sleep 0.5
  done
  echo "not ready after 240 s; the end of its log:" >&2; tail -20 "$2" >&2
  return 1
}
VERSION=$("$PY" -c 'import importlib.metadata as m; print(m.version("litellm"))')
start=$(date +%s)

SIM_PORT=$(free_port)
"$LADDER" sim --port "$SIM_PORT" --set ttft=50ms --set tpot=2ms --set output_tokens=50 \
  --set seed=7 >"$WORK/sim.log" 2>&1 &
PIDS+=($!)
wait_ready "http://127.0.0.1:$SIM_PORT/v1/models" "$WORK/sim.log" "${PIDS[-1]}" || { tail -20 "$WORK/sim.log" >&2; exit 1; }
UPSTREAM="http://127.0.0.1:$SIM_PORT/v1"

# The limits: each run's own key or deployment, low enough that the wall comes at 4 streams of
# [1, 2, 4, 8] × 16 requests (about 70 tokens a request: 20 of prompt, 50 generated).
KEY_TPM=2800 KEY_RPM=40 KEY_PARALLEL=2 MODEL_TPM=2800 MODEL_RPM=40 MODEL_OTPM=2000
MASTER_KEY="sk-compat-$("$PY" -c 'import secrets; print(secrets.token_hex(12))')"
litellm_config() { # $1: extra general_settings lines
  cat <<YAML
model_list:
  - model_name: sim-model
    litellm_params: {model: openai/sim-model, api_base: "$UPSTREAM", api_key: none}
  - model_name: sim-tpm
    litellm_params: {model: openai/sim-model, api_base: "$UPSTREAM", api_key: none, tpm: $MODEL_TPM}
  - model_name: sim-rpm
    litellm_params: {model: openai/sim-model, api_base: "$UPSTREAM", api_key: none, rpm: $MODEL_RPM}
  - model_name: sim-otpm
    litellm_params: {model: openai/sim-model, api_base: "$UPSTREAM", api_key: none, otpm: $MODEL_OTPM}
router_settings:
  optional_pre_call_checks: [enforce_model_rate_limits]
general_settings:
  master_key: os.environ/LITELLM_MASTER_KEY
$1
litellm_settings:
  telemetry: false
YAML
}
start_litellm() { # $1: config, $2: log, then extra environment (NAME=VALUE ...)
  local config=$1 log=$2
  shift 2
  PORT=$(free_port)
  (cd "$WORK" && exec env "$@" LITELLM_MASTER_KEY="$MASTER_KEY" LITELLM_LOCAL_MODEL_COST_MAP=True \
    PATH="$VENV/bin:$PATH" "$VENV/bin/litellm" --config "$config" --host 127.0.0.1 --port "$PORT" >"$log" 2>&1) &
  PIDS+=($!)
  wait_ready "http://127.0.0.1:$PORT/health/liveliness" "$log" "${PIDS[-1]}"
}

# --- virtual keys in LiteLLM's database (PostgreSQL) ------------------------------------------
MODE=""
# Debian's server binaries (initdb, pg_ctl, postgres, psql) are in /usr/lib/postgresql/N/bin.
PG_BIN=$(dirname "$(ls -d /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -1 || true)")
[ -x "$PG_BIN/initdb" ] || PG_BIN=$(dirname "$(readlink -f "$(command -v initdb || echo /nonexistent)")")
if [ -x "$PG_BIN/initdb" ] && [ -x "$PG_BIN/pg_ctl" ]; then
  PGDATA_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ladder-pg.XXXXXX")
  [ "$(id -u)" != 0 ] || chown postgres "$PGDATA_DIR"
  PG_PORT=$(free_port)
  as_pg "$PG_BIN/initdb" -D "$PGDATA_DIR/data" -A trust -U ladder >"$WORK/initdb.log" 2>&1
  as_pg "$PG_BIN/pg_ctl" -D "$PGDATA_DIR/data" -o "-h 127.0.0.1 -p $PG_PORT -k $PGDATA_DIR" \
    -l "$PGDATA_DIR/postgres.log" -w start >/dev/null
  as_pg "$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U ladder -d postgres -qc 'create database litellm'
  echo "== PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$PG_PORT"
  litellm_config "" >"$WORK/litellm-db.yaml"
  echo "== LiteLLM $VERSION with DATABASE_URL (virtual keys)"
  if start_litellm "$WORK/litellm-db.yaml" "$WORK/litellm-db.log" \
    DATABASE_URL="postgresql://ladder@127.0.0.1:$PG_PORT/litellm"; then
    MODE=db
    LOG="$WORK/litellm-db.log"
  else
    kill "${PIDS[-1]}" 2>/dev/null || true
    echo "LiteLLM exited with its database; why, from its log:"
    grep -m3 -E 'Prisma|prisma|ENOTFOUND|Error' "$WORK/litellm-db.log" | cut -c1-300 || tail -5 "$WORK/litellm-db.log"
  fi
elif [ "${CI:-}" = true ]; then
  fail "PostgreSQL not installed (apt-get install postgresql)"
else
  echo "== PostgreSQL not installed (apt-get install postgresql): no virtual keys in a database"
fi

if [ "$MODE" = db ]; then
  # LiteLLM with its database: real virtual keys.
  new_key() {
    curl -fsS -H "authorization: Bearer $MASTER_KEY" -H 'content-type: application/json' \
      -d "$1" "http://127.0.0.1:$PORT/key/generate" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["key"])'
  }
  TPM_KEY=$(new_key "{\"tpm_limit\": $KEY_TPM}")
  RPM_KEY=$(new_key "{\"rpm_limit\": $KEY_RPM}")
  PAR_KEY=$(new_key "{\"max_parallel_requests\": $KEY_PARALLEL}")
  FREE_KEY=$(new_key '{}')
  echo "virtual keys from /key/generate with tpm_limit $KEY_TPM, rpm_limit $KEY_RPM, max_parallel_requests $KEY_PARALLEL"
else
  # The same limits on fixed keys through a custom auth hook.
  rnd() { "$PY" -c 'import secrets; print(secrets.token_hex(8))'; }
  TPM_KEY="sk-tpm-$(rnd)" RPM_KEY="sk-rpm-$(rnd)" PAR_KEY="sk-par-$(rnd)" FREE_KEY="sk-free-$(rnd)"
  export COMPAT_KEY_LIMITS="{\"$TPM_KEY\": {\"tpm_limit\": $KEY_TPM}, \"$RPM_KEY\": {\"rpm_limit\": $KEY_RPM}, \"$PAR_KEY\": {\"max_parallel_requests\": $KEY_PARALLEL}, \"$FREE_KEY\": {}}"
  cp "$ROOT/compat/litellm_key_limits.py" "$WORK/"
  litellm_config "  custom_auth: litellm_key_limits.user_api_key_auth" >"$WORK/litellm.yaml"
  echo "== LiteLLM $VERSION without a database: keys with tpm_limit $KEY_TPM, rpm_limit $KEY_RPM, max_parallel_requests $KEY_PARALLEL from compat/litellm_key_limits.py"
  LOG="$WORK/litellm.log"
  start_litellm "$WORK/litellm.yaml" "$LOG" || { tail -20 "$LOG" >&2; exit 1; }
fi
LITELLM_PID=${PIDS[-1]}
export COMPAT_BASE_URL="http://127.0.0.1:$PORT/v1"
BODY='{"model":"MODEL","messages":[{"role":"user","content":"hello"}],"max_tokens":50}'
# show KEY MODEL: one request's status line, rate-limit headers and body.
show() {
  curl -sS -D "$WORK/h" -o "$WORK/b" -H "authorization: Bearer $1" -H 'content-type: application/json' \
    -d "${BODY/MODEL/$2}" "$COMPAT_BASE_URL/chat/completions" || true
  head -1 "$WORK/h" | tr -d '\r'
  grep -iE '^(retry-after|rate_limit_type|reset_at|x-ratelimit-|llm_provider-retry-after|x-litellm-key-(tpm|rpm|max))' "$WORK/h" | tr -d '\r' | sed 's/^/  /'
  if ! head -1 "$WORK/h" | grep -q ' 200'; then echo "  $(cat "$WORK/b")"; fi
}

# limit_run NAME KEY MODEL KIND LIMIT [ARG...]: a ladder through the proxy (ARGs to `ladder run`),
# then check the wall.
limit_run() {
  local name=$1 key=$2 model=$3 kind=$4 limit=$5 dir
  shift 5
  echo
  echo "== $name: a success's rate-limit headers"
  show "$key" "$model"
  echo "== $name: ladder run litellm-limits.yaml ($model)"
  COMPAT_API_KEY=$key COMPAT_MODEL=$model "$LADDER" run "$ROOT/compat/litellm-limits.yaml" "$@" \
    --out "$WORK/runs/$name" --no-color --quiet >"$WORK/$name.out" 2>&1 || fail "$name: ladder run exited $?"
  grep -E 'Rate-limit wall|Acceleration|Isolated 429' "$WORK/$name.out" || true
  echo "== $name: what LiteLLM answers now"
  show "$key" "$model"
  dir=$(ls -d "$WORK/runs/$name"/*/*/ | tail -1)
  if "$PY" - "$dir" "$WORK/$name.out" "$kind" "$limit" <<'PYEOF'; then
import csv, json, re, sys
run, out, kind, limit = sys.argv[1], open(sys.argv[2]).read(), sys.argv[3], int(sys.argv[4])
words = {"tokens": "tokens per minute", "requests": "requests per minute",
         "output_tokens": "output tokens per minute", "concurrency": "requests in flight"}[kind]
rows = list(csv.DictReader(open(run + "requests.csv", newline="")))
wall = json.load(open(run + "findings.json"))[0].get("wall") or {}
refused = [r for r in rows if r["http_status"] == "429"]
kinds = sorted({r["limit_kind"] for r in refused})
values = sorted({r["limit_value"] for r in refused})
headroom = sorted({r["ratelimit_headroom"] for r in rows if r["status"] == "ok"})
print(f"{len(rows)} requests, {len(refused)} got 429: limit_kind {kinds}, limit_value {values}; "
      f"wall {wall.get('status')} at {wall.get('concurrency')} streams, kind {wall.get('kind')}, "
      f"limit {wall.get('limit')}; successes' ratelimit_headroom from {headroom[:1]} to {headroom[-1:]}")
sentence = re.search(r"Rate-limit wall at \d+ streams?: [\d.]+% of requests got 429 \(" + re.escape(words) + r", limit [\d.]+[kM]?[;)]", out)
ok = (wall.get("status") == "wall" and wall.get("kind") == kind and wall.get("limit") == limit
      and kinds == [kind] and values == [str(limit)] and sentence is not None)
if not ok:
    print(f"expected: wall kind {kind}, limit {limit}, every 429 so, and a sentence naming '{words}, limit …'")
sys.exit(0 if ok else 1)
PYEOF
    PASSED=$((PASSED + 1))
  else
    fail "$name: the wall is not named $kind with limit $limit ($dir)"
  fi
  kill -0 "$LITELLM_PID" 2>/dev/null || { fail "LiteLLM died"; tail -20 "$LOG" >&2; exit 1; }
}

limit_run key-tpm "$TPM_KEY" sim-model tokens "$KEY_TPM"
limit_run key-rpm "$RPM_KEY" sim-model requests "$KEY_RPM"
limit_run key-parallel "$PAR_KEY" sim-model concurrency "$KEY_PARALLEL"
# A deployment's limits count per minute of the clock (LiteLLM's cache key is the UTC "%H-%M"):
# each run starts early in a minute so that it ends before the count starts again.
fresh_minute() { while [ "$(date -u +%S | sed 's/^0//')" -gt 40 ]; do sleep 1; done; }
# A deployment's `tpm` refuses nothing streamed in LiteLLM 1.108.7 (the streamed tokens are
# counted, x-ratelimit-remaining-tokens goes below zero, and every request is let through), so
# this run does not stream.
fresh_minute
limit_run model-tpm "$FREE_KEY" sim-tpm tokens "$MODEL_TPM" --no-stream
fresh_minute
limit_run model-rpm "$FREE_KEY" sim-rpm requests "$MODEL_RPM"
fresh_minute
limit_run model-otpm "$FREE_KEY" sim-otpm output_tokens "$MODEL_OTPM"

echo
echo "compat: litellm-limits ($([ "$MODE" = db ] && echo "virtual keys in PostgreSQL" || echo "keys from a custom auth hook"), $(($(date +%s) - start)) s): $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ] || { echo "(logs and runs in $WORK)"; exit 1; }
