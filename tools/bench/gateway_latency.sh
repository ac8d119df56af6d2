#!/usr/bin/env bash
# Benchmark: coldbrew's added latency and throughput through the gateway, on loopback, against
# a warm trivial native (`provided`) handler — examples/hello-cpp's bootstrap.
#
#   tools/bench/gateway_latency.sh [REQUESTS]        (after tools/build.sh)
#
# Prints the p50/p99 of one keep-alive connection through coldbrew, the same against a
# trivial baseline HTTP server (client + kernel cost), their difference (coldbrew's added
# latency; targets: p50 < 0.3 ms, p99 < 2 ms), throughput with 4 connections, and coldbrew's own
# CPU time per request during that run.
set -euo pipefail
cd "$(dirname "$0")/../.."
requests=${1:-20000}
build=build
client=$build/tools/bench/bench_load_client
bootstrap=$build/examples/hello-cpp/function/bootstrap
for f in "$client" "$bootstrap" "$build/coldbrew"; do
  [ -x "$f" ] || { echo "missing $f: run tools/build.sh first" >&2; exit 1; }
done

work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

sed "s|CodeUri: .*|CodeUri: $PWD/$(dirname "$bootstrap")|" examples/hello-cpp/template.yaml > "$work/template.yaml"
# max_environments 4: the throughput run uses 4 connections, each kept on a warm environment.
# memory_mb 1769 (one vCPU): at the template's 128 MB the handler's CPU quota (0.07 vCPU, where
# cgroups are writable) would be measured instead of coldbrew.
printf 'max_environments: 4\nfunctions:\n  HelloCpp:\n    memory_mb: 1769\n' > "$work/coldbrew.yaml"
$build/coldbrew --log-level warn up "$work" --port 0 --invoke-port 0 --seed 1 > "$work/out.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q "gateway listening" "$work/out.log" 2>/dev/null && break; sleep 0.05; done
port=$(grep -o 'gateway listening on http://[0-9.]*:[0-9]*' "$work/out.log" | sed 's/.*://')

$client serve "$work/baseline.port" &
pids+=($!)
for _ in $(seq 100); do [ -s "$work/baseline.port" ] && break; sleep 0.05; done
base_port=$(cat "$work/baseline.port")

echo "warm-up…"
$client client "$port" /hello/cpp 4 500 > /dev/null
$client client "$base_port" /hello/cpp 1 2000 > /dev/null

echo "coldbrew, 1 connection:  $($client client "$port" /hello/cpp 1 "$requests")" | tee "$work/cb.txt"
echo "baseline, 1 connection:  $($client client "$base_port" /hello/cpp 1 "$requests")" | tee "$work/base.txt"
field() { grep -o "$1 [0-9.]*" "$2" | awk '{print $2}'; }
awk -v a="$(field p50 "$work/cb.txt")" -v b="$(field p50 "$work/base.txt")" \
    -v c="$(field p99 "$work/cb.txt")" -v d="$(field p99 "$work/base.txt")" \
    'BEGIN { printf "coldbrew added latency:  p50 %.3f ms  p99 %.3f ms  (targets 0.3 / 2)\n", a-b, c-d }'
# coldbrew's own CPU time (user + system, from /proc) per request of the 4-connection run: a
# steadier figure than requests/s on a machine that is doing other things.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
cb_pid=${pids[0]}
before=$(cpu_ticks "$cb_pid")
echo "coldbrew, 4 connections: $($client client "$port" /hello/cpp 4 "$requests")"
after=$(cpu_ticks "$cb_pid")
awk -v t="$((after - before))" -v hz="$(getconf CLK_TCK)" -v n="$((4 * requests))" \
    'BEGIN { printf "coldbrew CPU per request: %.1f us (user + system, 4 connections)\n", t / hz / n * 1e6 }'
