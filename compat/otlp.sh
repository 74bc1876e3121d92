#!/usr/bin/env bash
# `make compat`, OTLP (issue 37): `ladder run --otlp` against a receiver that decodes with the
# official OTLP definitions (PyPI's opentelemetry-proto, pinned) in a scratch venv, protobuf and
# then JSON, and checks names, units, attributes and counts against requests.csv
# (compat/otlp_receiver.py). An OpenTelemetry Collector is not tried: no registry here ships it
# as a binary (it is a Go program built from Go modules).
#
# Environment: LADDER_COMPAT_DIR (scratch folder, default target/compat), LADDER (the binary).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCRATCH=${LADDER_COMPAT_DIR:-$ROOT/target/compat}
LADDER=${LADDER:-$ROOT/target/release/ladder}
PROTO=1.45.2
mkdir -p "$SCRATCH"
SCRATCH=$(cd "$SCRATCH" && pwd)
DIR="$SCRATCH/otlp"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_CACHE_DIR="$SCRATCH/pip-cache"
if ! "$DIR/venv/bin/python" -c "import importlib.metadata as m; assert m.version('opentelemetry-proto') == '$PROTO'" 2>/dev/null; then
  echo "== install opentelemetry-proto $PROTO (PyPI) into $DIR/venv"
  rm -rf "$DIR/venv"
  python3 -m venv "$DIR/venv"
  "$DIR/venv/bin/pip" install --quiet "opentelemetry-proto==$PROTO"
fi
rm -rf "$DIR/work" && mkdir -p "$DIR/work/prompts"
cp "$ROOT/scenarios/prompts/"* "$DIR/work/prompts/" 2>/dev/null || true
cat >"$DIR/work/otel.yaml" <<'YAML'
name: otel
target:
  api: openai-chat
  sim: {ttft: 30ms, tpot: 3ms, output_tokens: 12, seed: 7, faults: {http_503: 0.1}}
  models: [sim-model]
request:
  prompt: {text: "Say hello."}
  max_tokens: 12
load:
  ladder: [2, 4]
  requests_per_step: 40
  warmup_requests: 0
telemetry:
  otlp:
    endpoint: http://127.0.0.1:9
    every: 300ms
    traces: true
YAML
echo "== ladder run --otlp: a receiver decoding with opentelemetry-proto $PROTO"
(cd "$DIR/work" && "$DIR/venv/bin/python" "$ROOT/compat/otlp_receiver.py" "$LADDER" otel.yaml runs)
echo "otlp: passed"
