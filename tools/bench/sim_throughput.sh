#!/usr/bin/env bash
# Benchmark: `coldbrew sim` throughput on a five-hop chain with retries
# (tools/bench/sim_chain.yaml).
#
#   tools/bench/sim_throughput.sh            (after tools/build.sh; COLDBREW=path overrides)
#
# Prints simulated requests per second per core for the fast engine (no capacity limits) and
# the discrete-event engine (two hops with concurrency limits that queue), the wall time of
# 100 million requests on 2 threads, and the peak RSS of 10M against 100M requests (memory
# must not grow with the request count). Targets (issue 7): >= 2M req/s/core fast,
# >= 0.5M req/s/core events, 100M requests < 60 s on 2 cores.
# Then, when build/tools/bench/bench_sim_faults is built, the same chain with every hop standing
# for a live request decided by five fault rules, against the plain chain (the cost of deciding
# through models/faults).
# "Per core" is requests divided by the process's CPU time (user + system), so a machine
# shared with other work still measures the simulator, not the neighbours.
set -euo pipefail
cd "$(dirname "$0")/../.."
coldbrew=${COLDBREW:-build/coldbrew}
scenario=tools/bench/sim_chain.yaml
[ -x "$coldbrew" ] || { echo "missing $coldbrew: run tools/build.sh first" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (Debian package 'time')" >&2; exit 1; }
queues=(--set engine=events --set components.orders.capacity.concurrency=60
        --set components.ledger.capacity.concurrency=40)

# run LABEL REQUESTS THREADS [ARGS…]: prints "LABEL cpu_s wall_s rss_kb"
run() {
  local label=$1 n=$2 threads=$3
  shift 3
  local out
  out=$( { /usr/bin/time -f '%U %S %e %M' "$coldbrew" sim "$scenario" --requests "$n" \
            --threads "$threads" --no-progress --json "$@" >/dev/null; } 2>&1 | tail -1)
  read -r user sys wall rss <<<"$out"
  echo "$label $(awk -v a="$user" -v b="$sys" 'BEGIN { printf "%.2f", a + b }') $wall $rss"
}

rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.2f", n / s / 1000000 }'; }

echo "five-hop chain with retries ($scenario)"
read -r _ cpu wall _ < <(run fast 4000000 1)
echo "  fast engine (no capacity limits): $(rate 4000000 "$cpu") M requests/s per core (4M requests, ${cpu} s CPU)"
read -r _ cpu wall _ < <(run events 2000000 1 "${queues[@]}")
echo "  events engine (two hops queue):   $(rate 2000000 "$cpu") M requests/s per core (2M requests, ${cpu} s CPU)"
read -r _ cpu wall rss100 < <(run fast100 100000000 2)
echo "  100M requests, 2 threads, fast:   ${wall} s wall (${cpu} s CPU)"
read -r _ _ _ rss10 < <(run fast10 10000000 2)
echo "  peak RSS, fast engine:            10M requests ${rss10} KB, 100M requests ${rss100} KB"
read -r _ _ _ des1 < <(run ev1 1000000 2 "${queues[@]}")
read -r _ _ _ des10 < <(run ev10 10000000 2 "${queues[@]}")
echo "  peak RSS, events engine:          1M requests ${des1} KB, 10M requests ${des10} KB"
faults_bench=${FAULTS_BENCH:-build/tools/bench/bench_sim_faults}
if [ -x "$faults_bench" ]; then "$faults_bench" "$scenario" 2000000; fi
