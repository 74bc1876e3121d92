#!/usr/bin/env bash
# Part of `make compat`: ladder through a real nginx that asks for TLS client certificates
# (`ssl_verify_client on`), in front of `ladder sim`, with a private CA made here by openssl.
#   - Without a client certificate nginx completes the handshake and answers its own
#     `400 No required SSL certificate was sent` page: `ladder check` must say that the server
#     wants a TLS client certificate and name target.tls.client_cert / client_key (issue 19),
#     not "an HTML page instead of JSON".
#   - With an X.509 v1 client certificate (what `openssl x509 -req` makes without extensions)
#     ladder must refuse it before traffic (exit 2) and say a version 3 one is needed.
#   - With a v3 client certificate signed by the CA, `ladder check` passes and every request of
#     a small ladder succeeds (mutual TLS through nginx).
# Skips, saying so, when nginx or openssl is not installed (`.ci/run` installs nginx).
#
# Environment: LADDER (the binary, default target/release/ladder), LADDER_COMPAT_DIR (scratch
# folder, default target/compat; this script uses its nginx/ subfolder).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LADDER=${LADDER:-$ROOT/target/release/ladder}
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
if [ ! -x "$NGINX" ] || ! command -v openssl >/dev/null 2>&1; then
  echo "compat nginx: skipped: nginx or openssl not installed (apt-get install nginx openssl)"
  exit 0
fi
[ -x "$LADDER" ] || { echo "compat nginx: $LADDER not found; run make build" >&2; exit 1; }
SCRATCH=${LADDER_COMPAT_DIR:-$ROOT/target/compat}/nginx
rm -rf "$SCRATCH"
mkdir -p "$SCRATCH/tmp" "$SCRATCH/runs"
SCRATCH=$(cd "$SCRATCH" && pwd)
cd "$SCRATCH"
PIDS=()
FAILED=0
PASSED=0
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT
say() { printf '\n== %s\n' "$*"; }
fail() { echo "compat nginx: FAIL: $*" >&2; FAILED=$((FAILED + 1)); }
# expect NAME OUTPUT WORDS...: pass when OUTPUT holds every one of WORDS.
expect() {
  local name=$1 out=$2 w
  shift 2
  for w in "$@"; do
    if ! grep -qF -- "$w" <<<"$out"; then
      fail "$name: the output does not say \`$w\`"
      return
    fi
  done
  PASSED=$((PASSED + 1))
}

say "a private CA, a server certificate for localhost and two client certificates (v3 and v1)"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=ladder-compat-ca \
  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
  -keyout ca.key -out ca.pem 2>/dev/null
sign() { # sign NAME SUBJECT [EXTENSIONS]: NAME.key and NAME.pem signed by the CA
  openssl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$1.key" -out "$1.csr" 2>/dev/null
  if [ -n "${3:-}" ]; then
    printf '%b' "$3" >"$1.ext"
    openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
      -extfile "$1.ext" -out "$1.pem" 2>/dev/null
  else
    openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
      -out "$1.pem" 2>/dev/null
  fi
}
sign server /CN=localhost 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n'
sign client /CN=ladder-client 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n'
sign client-v1 /CN=ladder-client-v1
openssl x509 -in client-v1.pem -noout -text | grep -m1 'Version:'

say "ladder sim behind nginx $("$NGINX" -v 2>&1 | sed 's/.*nginx\///') with ssl_verify_client on"
"$LADDER" sim --port 0 --bind 127.0.0.1 --set ttft=20ms --set tpot=2ms >sim.out 2>sim.log &
PIDS+=($!)
for _ in $(seq 1 100); do [ -s sim.out ] && break; sleep 0.1; done
SIM=$(head -1 sim.out)
SIM_ROOT=${SIM%/v1}
[ -n "$SIM" ] || { echo "compat nginx: ladder sim did not start; its log:" >&2; cat sim.log >&2; exit 1; }
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >nginx.conf <<EOF
worker_processes 1;
daemon off;
pid $SCRATCH/nginx.pid;
error_log $SCRATCH/nginx-error.log info;
events { worker_connections 256; }
http {
  access_log $SCRATCH/nginx-access.log;
  client_body_temp_path $SCRATCH/tmp/body;
  proxy_temp_path $SCRATCH/tmp/proxy;
  fastcgi_temp_path $SCRATCH/tmp/fastcgi;
  uwsgi_temp_path $SCRATCH/tmp/uwsgi;
  scgi_temp_path $SCRATCH/tmp/scgi;
  server {
    listen 127.0.0.1:$PORT ssl;
    server_name localhost;
    ssl_certificate $SCRATCH/server.pem;
    ssl_certificate_key $SCRATCH/server.key;
    ssl_client_certificate $SCRATCH/ca.pem;
    ssl_verify_client on;
    location / {
      proxy_pass $SIM_ROOT;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
    }
  }
}
EOF
"$NGINX" -e "$SCRATCH/nginx-error.log" -p "$SCRATCH" -c "$SCRATCH/nginx.conf" &
PIDS+=($!)
ready=0
for _ in $(seq 1 100); do
  if ! kill -0 "${PIDS[-1]}" 2>/dev/null; then break; fi
  if curl -s -o /dev/null --cacert ca.pem "https://localhost:$PORT/"; then ready=1; break; fi
  sleep 0.1
done
if [ "$ready" != 1 ]; then
  echo "compat nginx: nginx did not start; its log:" >&2
  tail -20 "$SCRATCH/nginx-error.log" >&2
  exit 1
fi
curl -s --cacert ca.pem "https://localhost:$PORT/v1/models" | head -c 300
echo

# scenario NAME TLS: a two-step ladder through nginx with the TLS settings TLS.
scenario() {
  cat >"$1.yaml" <<EOF
name: $1
target:
  api: openai-chat
  base_url: https://localhost:$PORT/v1
  models: [sim-model]
  tls: {ca_file: $SCRATCH/ca.pem$2}
request:
  prompt_file: $ROOT/compat/prompt.txt
  max_tokens: 16
load:
  ladder: [1, 2]
  requests_per_step: 5
  warmup_requests: 0
EOF
}

say "no client certificate: ladder check"
scenario nginx-no-cert ""
code=0
out=$("$LADDER" check nginx-no-cert.yaml --no-color 2>&1) || code=$?
echo "$out"
[ "$code" = 1 ] || fail "no client certificate: ladder check exited $code, expected 1"
expect "no client certificate" "$out" "HTTP 400: the server wants a TLS client certificate" \
  "target.tls.client_cert" "target.tls.client_key"
if grep -qF "HTML page" <<<"$out"; then fail "no client certificate: still called an HTML page"; fi

say "an X.509 v1 client certificate: ladder run"
scenario nginx-v1-cert ", client_cert: $SCRATCH/client-v1.pem, client_key: $SCRATCH/client-v1.key"
code=0
out=$("$LADDER" run nginx-v1-cert.yaml --out runs --no-color 2>&1) || code=$?
echo "$out"
[ "$code" = 2 ] || fail "v1 client certificate: ladder run exited $code, expected 2"
expect "v1 client certificate" "$out" "X.509 version 1" "version 3"

say "a v3 client certificate signed by the CA: ladder check, then ladder run"
scenario nginx-mtls ", client_cert: $SCRATCH/client.pem, client_key: $SCRATCH/client.key"
if "$LADDER" check nginx-mtls.yaml --no-color; then PASSED=$((PASSED + 1)); else fail "mutual TLS: ladder check did not pass"; fi
code=0
"$LADDER" run nginx-mtls.yaml --out runs --no-color || code=$?
[ "$code" = 0 ] || fail "mutual TLS: ladder run exited $code"
dir=$(ls -dt runs/nginx-mtls/*/ | head -1)
if python3 - "$dir/requests.csv" <<'EOF'; then PASSED=$((PASSED + 1)); else fail "mutual TLS: not every request succeeded ($dir)"; fi
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
ok = [r for r in rows if r["status"] == "ok" and int(r["output_tokens"] or 0) > 0]
print(f"{len(rows)} requests through nginx with mutual TLS, {len(ok)} ok")
sys.exit(0 if rows and len(ok) == len(rows) == 10 else 1)
EOF

echo
echo "compat nginx: $PASSED passed, $FAILED failed"
if [ "$FAILED" != 0 ]; then
  echo "(logs and runs in $SCRATCH)"
  exit 1
fi
