#!/usr/bin/env bash
# Profiles one client run the way benches/overhead.rs measures it (issue 24): `ladder sim` pinned
# to core 1, the client pinned to core 0 under a wrapper command (perf, strace, valgrind), both at
# nice -15. The client is `ladder run` of one step, or with CLIENT=ref the lean reference client
# (the overhead bench binary's `--reference` mode). Figures go wherever the wrapper puts them.
#
# Usage: benches/profile.sh STREAMS REQUESTS RAMP_MS WRAPPER...
#   LADDER   the ladder binary (default target/release/ladder)
#   SIM      the binary that serves `ladder sim` (default LADDER; give one binary to compare
#            clients of different commits against the same simulator)
#   REF      the overhead bench binary, for CLIENT=ref (`cargo bench --no-run --bench overhead`
#            prints its path)
#   TTFT     the simulator's TTFT (default 200ms; 64 tokens at 20 ms follow it)
# Examples (benches/RESULTS.md, issue 24):
#   benches/profile.sh 100 1000 1000 perf stat -e task-clock,context-switches
#   benches/profile.sh 100 1000 1000 perf record -F 1999 --call-graph dwarf,32768 -o /tmp/ladder.data
#   benches/profile.sh 100 500 1000 strace -c -f -o /tmp/ladder.strace
#   benches/profile.sh 10 100 0 valgrind --tool=callgrind --callgrind-out-file=/tmp/ladder.cg
#   CLIENT=ref REF=target/release/deps/overhead-HASH benches/profile.sh 100 1000 1000 perf stat
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,19p' "$0" >&2; exit 2; }
C=$1 N=$2 RAMP=$3
shift 3
LADDER=${LADDER:-target/release/ladder}
DIR=$(mktemp -d)
trap 'kill "$SIM" 2>/dev/null || true; rm -rf "$DIR"' EXIT
nice -n -15 taskset -c 1 "${SIM:-$LADDER}" --quiet sim --port 0 --set "ttft=${TTFT:-200ms}" \
  --set tpot=20ms --set tpot_jitter=0 --set output_tokens=64 >"$DIR/sim.out" &
SIM=$!
for _ in $(seq 100); do [ -s "$DIR/sim.out" ] && break; sleep 0.1; done
BASE=$(head -n 1 "$DIR/sim.out")
BASE=${BASE%/v1}
echo "Say hello in a few words." >"$DIR/prompt.txt"
RAMP_LINE=""
[ "$RAMP" = 0 ] || RAMP_LINE="  ramp_up: ${RAMP}ms"
cat >"$DIR/profile.yaml" <<EOF
name: profile
target:
  api: openai-chat
  base_url: $BASE/v1
  models: [sim-model]
request:
  prompt_file: prompt.txt
  max_tokens: 64
load:
  ladder: [$C]
  requests_per_step: $N
  warmup_requests: 0
$RAMP_LINE
EOF
if [ "${CLIENT:-ladder}" = ref ]; then
  nice -n -15 taskset -c 0 "$@" "${REF:?set REF to the overhead bench binary}" \
    --reference "$BASE" "$C" "$N" "$RAMP" "$DIR/reference.csv"
else
  nice -n -15 taskset -c 0 "$@" "$LADDER" --quiet run --out "$DIR/runs" "$DIR/profile.yaml" >/dev/null
fi
