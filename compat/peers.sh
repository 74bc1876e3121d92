#!/usr/bin/env bash
# `make compat` (through compat/run.sh), issue 48 part 5: other load-testing tools' results read
# as ladder runs. GuideLLM and AIPerf (pinned below, from PyPI, each in its own scratch venv) run
# the same concurrency ladder as ladder itself against one `ladder sim` with a 4-stream cap;
# `ladder logs` reads each tool's output, and each must find the knee ladder's own run finds
# (the same or an adjacent interval, the estimated cap within 10%). Then `ladder diff` of the
# GuideLLM run against the AIPerf baseline of the same workload must pass (exit 0), and of a
# GuideLLM run against a simulator 30% slower in TPOT must fail (exit 3). The tools want a
# tokenizer from a model hub this machine cannot reach: compat/peers_tokenizer.py trains a tiny
# one from the repository's docs. With PEERS_VLLM=1, vLLM's `bench serve` (vllm from PyPI: it
# installs on a CPU-only machine and its benchmark client runs, but the install is 9.5 GB and
# ~13 minutes, too much for CI's budget) runs the same ladder and must find the same knee.
#
# Environment: LADDER_COMPAT_DIR (scratch folder, default target/compat), LADDER (the binary),
# PEERS_INSTALL_ONLY=1 (install the tools' venvs and stop),
# PEERS_FIXTURES=DIR (also write the trimmed outputs there: how scenarios/logs/peers/ was made).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCRATCH=${LADDER_COMPAT_DIR:-$ROOT/target/compat}
LADDER=${LADDER:-$ROOT/target/release/ladder}
GUIDELLM=0.8.1
AIPERF=0.13.0
TOKENIZERS=0.23.3
VLLM=0.33.0
mkdir -p "$SCRATCH"
SCRATCH=$(cd "$SCRATCH" && pwd)
DIR="$SCRATCH/peers"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_CACHE_DIR="$DIR/pip-cache"
# The tools load the tokenizer from a folder (no hub); no telemetry. (HF_HUB_OFFLINE=1 makes
# AIPerf 0.13.0 refuse a folder path as a repo id, so it is not set.)
export HF_HUB_DISABLE_TELEMETRY=1 DO_NOT_TRACK=1
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT

venv() { # NAME PIN...: a scratch venv holding exactly those pins
  local v="$DIR/venv-$1"
  shift
  if [ "$(cat "$v/.pin" 2>/dev/null)" != "$*" ]; then
    echo "== install $* (PyPI) into $v"
    rm -rf "$v" && python3 -m venv "$v"
    "$v/bin/pip" install --quiet "$@"
    echo "$*" >"$v/.pin"
  fi
}
venv guidellm "guidellm==$GUIDELLM" "tokenizers==$TOKENIZERS"
venv aiperf "aiperf==$AIPERF" "tokenizers==$TOKENIZERS"
[ "${PEERS_VLLM:-0}" = 1 ] && venv vllm "vllm==$VLLM"
# compat/run.sh installs the tools in the background first (PEERS_INSTALL_ONLY=1).
[ "${PEERS_INSTALL_ONLY:-0}" = 1 ] && exit 0
rm -rf "$DIR/work" && mkdir -p "$DIR/work" && cd "$DIR/work"
"$DIR/venv-aiperf/bin/python" "$ROOT/compat/peers_tokenizer.py" tok "$ROOT"/README.md "$ROOT"/docs/*.md

# One workload for all: 64-token prompts (the tools' own tokenizer), 16 output tokens, 48
# requests per step, the ladder 1, 2, 4, 8, 16 against a 4-stream cap (the knee in (4, 8]).
LADDER_VALUES=1,2,4,8,16
PER_STEP=48
sim() { # PORT TPOT
  "$LADDER" sim --quiet --port "$1" --set ttft=100ms --set tpot="$2" --set output_tokens=16 \
    --set concurrency_cap=4 --set seed=7 &
  PIDS+=($!)
  for _ in $(seq 50); do curl -sf "http://127.0.0.1:$1/v1/models" >/dev/null && return; sleep 0.2; done
  echo "peers: ladder sim on $1 did not start" >&2; exit 1
}
guidellm() { # PORT OUT
  "$DIR/venv-guidellm/bin/guidellm" run \
    --backend "kind=openai_http,target=http://127.0.0.1:$1,model=sim-model,validate_backend=false" \
    --profile kind=concurrent --override profile.streams "$LADDER_VALUES" \
    --constraint "kind=max_requests,count=$PER_STEP" \
    --data kind=synthetic_text,prompt_tokens=64,output_tokens=16 \
    --tokenizer kind=huggingface_auto,model="$PWD/tok" \
    --output "kind=json,path=$2/benchmarks.json" --disable-console-interactive >"$2.log" 2>&1 ||
    { tail -30 "$2.log"; echo "peers: GuideLLM failed" >&2; exit 1; }
}
aiperf() { # PORT OUT
  "$DIR/venv-aiperf/bin/aiperf" profile --model sim-model --url "http://127.0.0.1:$1" \
    --endpoint-type chat --streaming --use-server-token-count --tokenizer "$PWD/tok" \
    --concurrency "$LADDER_VALUES" --request-count "$PER_STEP" \
    --prompt-input-tokens-mean 64 --prompt-output-tokens-mean 16 --random-seed 7 \
    --output-artifact-dir "$2" --ui-type none >"$2.log" 2>&1 ||
    { tail -30 "$2.log"; echo "peers: AIPerf failed" >&2; exit 1; }
}
vllm_sweep() { # PORT OUT: one result file per concurrency (vLLM runs one point at a time)
  mkdir -p "$2"
  for c in ${LADDER_VALUES//,/ }; do
    "$DIR/venv-vllm/bin/vllm" bench serve --backend openai-chat --base-url "http://127.0.0.1:$1" \
      --endpoint /v1/chat/completions --model sim-model --tokenizer "$PWD/tok" \
      --dataset-name random --random-input-len 64 --random-output-len 16 --seed 7 \
      --num-prompts "$PER_STEP" --max-concurrency "$c" \
      --metadata "vllm_version=$VLLM" random_input_len=64 random_output_len=16 \
      --save-result --save-detailed --result-dir "$2" --result-filename "c$c.json" >>"$2.log" 2>&1 ||
      { tail -30 "$2.log"; echo "peers: vLLM bench serve failed" >&2; exit 1; }
  done
}

sim 18601 10ms
sim 18602 13ms
cat >ladder.yaml <<YAML
name: peers-ladder
target:
  api: openai-chat
  base_url: http://127.0.0.1:18601/v1
  models: [sim-model]
request:
  prompt: {text: "Say hello in a few words, then count to ten."}
  max_tokens: 16
load:
  ladder: [${LADDER_VALUES}]
  requests_per_step: ${PER_STEP}
  warmup_requests: 0
YAML
echo "== ladder run: the ladder $LADDER_VALUES against ladder sim (cap 4 streams)"
"$LADDER" run ladder.yaml --quiet --no-step-summary --out runs >/dev/null
echo "== GuideLLM $GUIDELLM: the same ladder"
guidellm 18601 gl
echo "== AIPerf $AIPERF: the same ladder"
aiperf 18601 aip
echo "== GuideLLM $GUIDELLM against the simulator with TPOT 30% slower (13 ms)"
guidellm 18602 gl-slow
if [ "${PEERS_VLLM:-0}" = 1 ]; then
  echo "== vLLM $VLLM bench serve: the same ladder, one result per concurrency"
  vllm_sweep 18601 vl
fi

echo "== ladder logs: each tool's output as a run"
"$LADDER" logs gl/benchmarks.json --out runs --quiet
"$LADDER" logs aip --out runs --quiet
"$LADDER" logs gl-slow/benchmarks.json --format guidellm --out runs-slow --quiet
if [ "${PEERS_VLLM:-0}" = 1 ]; then "$LADDER" logs vl --out runs --quiet; fi
"$DIR/venv-aiperf/bin/python" "$ROOT/compat/peers_check.py" runs/peers-ladder/* runs/guidellm/* runs/aiperf/* \
  $([ "${PEERS_VLLM:-0}" = 1 ] && echo runs/vllm/*)

echo "== ladder diff: GuideLLM run against the AIPerf baseline, same workload: must pass"
code=0; "$LADDER" diff runs/aiperf/* runs/guidellm/* || code=$?
[ "$code" -eq 0 ] || { echo "peers: FAIL: diff exited $code, expected 0" >&2; exit 1; }
echo "== ladder diff: GuideLLM run on a 30% slower TPOT against the AIPerf baseline: must fail"
code=0; "$LADDER" diff --quiet runs/aiperf/* runs-slow/guidellm/* >diff-slow.txt || code=$?
cat diff-slow.txt | head -20
[ "$code" -eq 3 ] || { echo "peers: FAIL: diff exited $code, expected 3" >&2; exit 1; }
grep -q "TPOT" diff-slow.txt || { echo "peers: FAIL: the slower run's verdict names no TPOT" >&2; exit 1; }

if [ -n "${PEERS_FIXTURES:-}" ]; then
  mkdir -p "$PEERS_FIXTURES"
  T="$DIR/venv-aiperf/bin/python $ROOT/compat/peers_trim.py"
  $T guidellm gl/benchmarks.json "$PEERS_FIXTURES/guidellm-$GUIDELLM.json"
  $T guidellm gl-slow/benchmarks.json "$PEERS_FIXTURES/guidellm-$GUIDELLM-tpot13ms.json"
  for d in aip/concurrency_*; do
    $T aiperf "$d" "$PEERS_FIXTURES/aiperf-$AIPERF/$(basename "$d")"
  done
  if [ "${PEERS_VLLM:-0}" = 1 ]; then
    mkdir -p "$PEERS_FIXTURES/vllm-$VLLM"
    for f in vl/c*.json; do $T vllm "$f" "$PEERS_FIXTURES/vllm-$VLLM/$(basename "$f")"; done
  fi
  echo "fixtures written to $PEERS_FIXTURES"
fi
echo "peers: passed"
