#!/usr/bin/env bash
# `make compat`, the Responses API and embeddings (issue 36): the official `openai` Python SDK (PyPI, pinned) in a
# scratch venv reads `ladder sim`'s /v1/responses: its own event models validate streams recorded
# from the simulator, `responses.create(stream=True)` and the accumulating `responses.stream()`
# parse every event (plain, cut at max_output_tokens, with streamed reasoning, a function call;
# issue 38: chat's tool-call chunks too), and the SDK's
# usage agrees with what `ladder run --api openai-responses` recorded for the same request
# (compat/openai_sdk.py says what each check is); its `embeddings.create` parses /v1/embeddings
# (float, base64, dimensions, a batch) and agrees with what `ladder run --api openai-embeddings`
# recorded (compat/openai_sdk_embeddings.py). With the `anthropic` SDK beside it, the bodies of an
# agent's turns (issue 38: the model's or a synthetic tool call sent back, in chat, Anthropic and
# Responses shapes) validate against both SDKs' request types (compat/agent_bodies.py).
#
# Environment: LADDER_COMPAT_DIR (scratch folder, default target/compat), LADDER (the binary).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCRATCH=${LADDER_COMPAT_DIR:-$ROOT/target/compat}
LADDER=${LADDER:-$ROOT/target/release/ladder}
OPENAI=3.51.0
ANTHROPIC=2.17.0
mkdir -p "$SCRATCH"
SCRATCH=$(cd "$SCRATCH" && pwd)
DIR="$SCRATCH/openai-sdk"
PY="$DIR/venv/bin/python"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_CACHE_DIR="$SCRATCH/pip-cache"
[ -x "$LADDER" ] || { echo "openai-sdk: $LADDER not found; run make build" >&2; exit 1; }
if ! "$PY" -c "import importlib.metadata as m; assert m.version('openai') == '$OPENAI' and m.version('anthropic') == '$ANTHROPIC'" 2>/dev/null; then
  echo "== install openai $OPENAI and anthropic $ANTHROPIC (PyPI) into $DIR/venv"
  rm -rf "$DIR/venv"
  python3 -m venv "$DIR/venv"
  "$DIR/venv/bin/pip" install --quiet "openai==$OPENAI" "anthropic==$ANTHROPIC"
fi
rm -rf "$DIR/work" && mkdir -p "$DIR/work/recorded"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT
free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# sim NAME ARGS...: a simulator on a free port, its base URL in $BASE. (Not called as $(sim …):
# a command substitution's subshell would keep the PID to itself, and the simulator would outlive
# the script.)
sim() {
  local name=$1 port
  shift
  port=$(free_port)
  "$LADDER" sim --quiet --port "$port" --set ttft=20ms --set tpot=2ms --set output_tokens=12 "$@" \
    >"$DIR/work/$name.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 1 100); do
    curl -fsS -o /dev/null "http://127.0.0.1:$port/v1/models" 2>/dev/null && break
    sleep 0.1
  done
  BASE="http://127.0.0.1:$port/v1"
}
sim plain
PLAIN=$BASE
sim reasoning --set reasoning_tokens=5 --set stream_reasoning=true
REASONING=$BASE
sim failing --set faults.inband_error=1
FAILING=$BASE
sim embeddings --set embed_time=5ms
EMBED=$BASE
sim tools --set tool_call_share=1
TOOLS=$BASE
TOOL_DEFS='[{"type":"function","function":{"name":"get_weather","description":"Weather of a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]'
TOOL_FLAT='[{"type":"function","name":"get_weather","description":"Weather of a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]'

echo "== record raw streams from ladder sim ($PLAIN, $REASONING, $FAILING)"
record() {
  curl -fsSN -H 'content-type: application/json' -d "$2" "$1/responses" >"$DIR/work/recorded/$3.sse"
}
record "$PLAIN" '{"model":"sim-model","input":"Say hello.","instructions":"Be brief.","max_output_tokens":32,"stream":true,"store":false}' plain
record "$PLAIN" '{"model":"sim-model","input":[{"role":"user","content":"Say hello."}],"max_output_tokens":4,"stream":true,"store":false}' cut
record "$REASONING" '{"model":"sim-model","input":"Say hello.","max_output_tokens":32,"stream":true,"store":false,"reasoning":{"effort":"low","summary":"auto"}}' reasoning
record "$FAILING" '{"model":"sim-model","input":"Say hello.","max_output_tokens":32,"stream":true,"store":false}' failed
record "$TOOLS" '{"model":"sim-model","input":"Weather in Paris?","max_output_tokens":32,"stream":true,"store":false,"tools":'"$TOOL_FLAT"'}' tools
curl -fsSN -H 'content-type: application/json' \
  -d '{"model":"sim-model","messages":[{"role":"user","content":"Weather in Paris?"}],"max_tokens":32,"stream":true,"stream_options":{"include_usage":true},"tools":'"$TOOL_DEFS"'}' \
  "$TOOLS/chat/completions" >"$DIR/work/recorded/chat-tools.chat"

echo "== ladder run --api openai-responses against $PLAIN"
"$LADDER" run --quiet --no-color --base-url "$PLAIN" --api openai-responses --model sim-model \
  --ladder 1,2 --requests-per-step 6 --max-tokens 32 --prompt "Say hello." --out "$DIR/work/runs"
CSV=$(ls -t "$DIR"/work/runs/*/*/requests.csv | head -1)

echo "== the openai SDK $OPENAI against ladder sim"
"$PY" "$ROOT/compat/openai_sdk.py" "$PLAIN" "$REASONING" "$DIR/work/recorded" "$CSV" "$TOOLS"

echo "== ladder run --api openai-embeddings (4 texts per request) against $EMBED"
cat >"$DIR/work/embeddings.yaml" <<YAML
name: sdk-embeddings
target: {api: openai-embeddings, base_url: "$EMBED", models: [sim-model]}
request: {prompt: "Say hello.", batch: 4}
load: {ladder: [1, 2], requests_per_step: 6}
YAML
"$LADDER" run --quiet --no-color "$DIR/work/embeddings.yaml" --out "$DIR/work/emb-runs"
ECSV=$(ls -t "$DIR"/work/emb-runs/*/*/requests.csv | head -1)
"$PY" "$ROOT/compat/openai_sdk_embeddings.py" "$EMBED" "$ECSV" 4 "Say hello."

echo "== an agent's request bodies (3 turns, model and synthetic calls) against the SDKs' request types"
"$PY" "$ROOT/compat/agent_bodies.py" "$LADDER" "$DIR/work/agents"
