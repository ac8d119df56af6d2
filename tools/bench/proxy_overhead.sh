#!/usr/bin/env bash
# Benchmark: what a dependency proxy costs on loopback (tools/bench/proxy_overhead.cpp).
#
#   tools/bench/proxy_overhead.sh [GIB] [ROUND_TRIPS]     (defaults 2 and 20000)
#
# Builds bench_proxy_overhead in a release build directory (BUILD_DIR, default build-bench,
# configured RelWithDebInfo when missing), then prints client → upstream and upstream →
# client throughput through one uncapped dependency proxy and directly (target >= 1000 MB/s
# through the proxy), and 1-byte ping-pong round-trip p50/p99 through the proxy and directly,
# with the added latency (target: added p50 < 0.1 ms).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD_DIR:-build-bench}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if [ ! -f "$build/build.ninja" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$log" 2>&1 || { cat "$log"; exit 1; }
fi
cmake --build "$build" --target bench_proxy_overhead > "$log" 2>&1 || { cat "$log"; exit 1; }
"$build/tools/bench/bench_proxy_overhead" "${1:-2}" "${2:-20000}"
