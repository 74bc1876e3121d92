#!/usr/bin/env bash
# `make compat`: LiteLLM's own request log read by `ladder logs` (docs/logs.md, issue 35).
#
# Starts `ladder sim` with a 4-stream cap, the LiteLLM proxy in front of it with
# compat/ladder_log.py as a logging callback (every request's StandardLoggingPayload, one JSON
# line each), drives a ladder through the proxy (compat/litellm-logs.yaml), then reads LiteLLM's
# log with `ladder logs` and fails unless it finds the run's knee: the same kind and interval.
# LiteLLM comes from compat/run.sh's venv when it is there, else from its own.
#
# Environment: LADDER_COMPAT_DIR (scratch folder, default target/compat), LADDER (the binary,
# default target/release/ladder).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCRATCH=${LADDER_COMPAT_DIR:-$ROOT/target/compat}
LADDER=${LADDER:-$ROOT/target/release/ladder}
LITELLM_PIN="litellm[proxy]==1.108.7"
mkdir -p "$SCRATCH"
SCRATCH=$(cd "$SCRATCH" && pwd)
export PIP_CACHE_DIR="$SCRATCH/pip-cache" XDG_CACHE_HOME="$SCRATCH/cache" PIP_DISABLE_PIP_VERSION_CHECK=1
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
WORK="$SCRATCH/litellm-logs"
rm -rf "$WORK" && mkdir -p "$WORK"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT
free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_ready() {
  for _ in $(seq 1 360); do
    if ! kill -0 "$3" 2>/dev/null; then echo "server exited; its log:" >&2; tail -20 "$2" >&2; return 1; fi
    if curl -fsS -o /dev/null "$1" 2>/dev/null; then return 0; fi
    sleep 0.5
  done
  echo "server not ready after 180 s; its log:" >&2; tail -20 "$2" >&2
  return 1
}

SIM_PORT=$(free_port)
"$LADDER" sim --port "$SIM_PORT" --set ttft=800ms --set tpot=75ms --set output_tokens=30 \
  --set concurrency_cap=4 --set seed=7 >"$WORK/sim.log" 2>&1 &
PIDS+=($!)
wait_ready "http://127.0.0.1:$SIM_PORT/v1/models" "$WORK/sim.log" "${PIDS[-1]}"

PORT=$(free_port)
cp "$ROOT/compat/ladder_log.py" "$WORK/"
cat >"$WORK/litellm.yaml" <<YAML
model_list:
  - model_name: sim-model
    litellm_params: {model: openai/sim-model, api_base: "http://127.0.0.1:$SIM_PORT/v1", api_key: none}
litellm_settings:
  callbacks: ladder_log.proxy_handler_instance
  telemetry: false
YAML
export COMPAT_API_KEY="sk-compat-$("$PY" -c 'import secrets; print(secrets.token_hex(12))')"
echo "== LiteLLM $("$PY" -c 'import importlib.metadata as m; print(m.version("litellm"))') on 127.0.0.1:$PORT -> ladder sim (cap 4) on $SIM_PORT"
(cd "$WORK" && LITELLM_MASTER_KEY=$COMPAT_API_KEY LITELLM_LOCAL_MODEL_COST_MAP=True \
  LADDER_LITELLM_LOG="$WORK/litellm-requests.jsonl" \
  exec "$VENV/bin/litellm" --config litellm.yaml --host 127.0.0.1 --port "$PORT" >"$WORK/litellm.log" 2>&1) &
PIDS+=($!)
wait_ready "http://127.0.0.1:$PORT/health/liveliness" "$WORK/litellm.log" "${PIDS[-1]}"
export COMPAT_BASE_URL="http://127.0.0.1:$PORT/v1"

echo "== ladder run through the proxy"
"$LADDER" run "$ROOT/compat/litellm-logs.yaml" --out "$WORK/runs" --no-color
RUN=$(ls -d "$WORK"/runs/compat-litellm-logs/*/ | tail -1)
echo "== what LiteLLM logged: $(wc -l <"$WORK/litellm-requests.jsonl") payloads; the first one's timing fields:"
"$PY" -c 'import json,sys; p=json.loads(open(sys.argv[1]).readline()); print({k: p.get(k) for k in ("startTime","completionStartTime","endTime","response_time","model_group","status","prompt_tokens","completion_tokens","stream")})' "$WORK/litellm-requests.jsonl"
echo "== ladder logs on LiteLLM's log"
# 48 requests a step spread over neighbouring in-flight counts (LiteLLM's start is its own
# upstream call, after its pre-processing): levels of 20.
"$LADDER" logs "$WORK/litellm-requests.jsonl" --min-per-level 20 --out "$WORK/prod" --no-color
PROD=$(ls -d "$WORK"/prod/logs/*/ | tail -1)
"$PY" - "$RUN/findings.json" "$PROD/findings.json" <<'PYEOF'
import json, sys
run, log = (json.load(open(p))[0]["knee"] for p in sys.argv[1:3])
keys = ("status", "kind", "max_clean_concurrency", "concurrency")
print("run:", {k: run.get(k) for k in keys}, "cap", run.get("estimated_cap"))
print("log:", {k: log.get(k) for k in keys}, "cap", log.get("estimated_cap"))
same = run.get("status") == "knee" and all(run.get(k) == log.get(k) for k in keys)
print("compat: litellm-logs:", "PASS, the same knee" if same else "FAIL, another knee")
sys.exit(0 if same else 1)
PYEOF
