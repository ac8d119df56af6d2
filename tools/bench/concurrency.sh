#!/usr/bin/env bash
# Benchmark: what one request costs when many execution environments run at once.
#
#   tools/bench/concurrency.sh [--peer] [--no-stack] [CONNECTIONS…]
#       (default connections 1 4 16 64; after tools/build.sh; needs wrk: tools/setup.sh)
#
# For a native `provided` handler (examples/hello-cpp's bootstrap), a nodejs20.x handler and a
# python3.12 handler (the local python3), each behind an HTTP API route (payload 2.0) at
# MEMORY MB, it starts `coldbrew up` once per runtime, and for every connection count runs wrk
# for WARMUP seconds (so the environments exist) then DURATION seconds measured. One row each:
#   req/s, p50, p99            wrk's figures (latency in ms)
#   cpu ms/req machine         whole-machine busy CPU time (/proc/stat) over requests served:
#                              includes wrk and anything else running on the machine
#   cpu ms/req server          CPU time of the server's process tree (coldbrew and every
#                              environment, /proc/<pid>/stat utime+stime and that of reaped
#                              children) over requests served: what holds when the machine is
#                              shared
#   cs/req                     context switches of the whole machine (/proc/stat ctxt) per request
#   envs, rss/pss MB           live environments of the function and their mean RSS and PSS
#                              (PSS shares the interpreter binary's pages among environments)
#   err                        non-2xx responses and socket errors
# With --peer the same node handler also runs under serverless-offline 12 (serverless 3),
# installed with npm into PEER_DIR (default ~/.cache/coldbrew-bench/peer, never into the
# project); both servers stay up and each connection count is run against coldbrew, then the
# peer, alternating, followed by the ratios coldbrew/peer.
# Then (unless --no-stack) the memory of a generated stack of STACK_FUNCTIONS (default 200)
# nodejs20.x functions at 128 MB after one request each: coldbrew's RSS, the environments' total
# and mean RSS, and how many environments were left (a memory_budget_mb evicts idle ones; set
# STACK_BUDGET_MB to try one).
#
# Environment: DURATION (default 5), WARMUP (default 1), MEMORY (default 1024), RUNTIMES
# (subset of "provided nodejs20.x python3.12"), COLDBREW (default build/coldbrew),
# NATIVE_DIR (a directory holding a `bootstrap`, default build/examples/hello-cpp/function),
# STACK_FUNCTIONS, STACK_BUDGET_MB, PEER_DIR.
# Traffic goes to 127.0.0.1 only; every server (and its process group) ends with the script.
# Figures are noisy on a shared machine: compare the server CPU per request and run twice.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
coldbrew=${COLDBREW:-$root/build/coldbrew}
native_dir=${NATIVE_DIR:-$root/build/examples/hello-cpp/function}
duration=${DURATION:-5}
warmup=${WARMUP:-1}
memory=${MEMORY:-1024}
stack_functions=${STACK_FUNCTIONS:-200}
peer_dir=${PEER_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/coldbrew-bench/peer}
read -r -a runtimes <<<"${RUNTIMES:-provided nodejs20.x python3.12}"

peer=0 stack=1 conns=()
for a in "$@"; do
  case $a in
    --peer) peer=1 ;;
    --no-stack) stack=0 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *)
      [[ $a =~ ^[1-9][0-9]*$ ]] && [ "$a" -le 256 ] ||
        { echo "connections must be whole numbers 1..256, got '$a'" >&2; exit 2; }
      conns+=("$a") ;;
  esac
done
[ ${#conns[@]} -gt 0 ] || conns=(1 4 16 64)
for v in duration warmup memory stack_functions; do
  [[ ${!v} =~ ^[0-9]+$ ]] || { echo "$v must be a whole number, got '${!v}'" >&2; exit 2; }
done
[ "$stack_functions" -le 1000 ] || { echo "STACK_FUNCTIONS at most 1000" >&2; exit 2; }
command -v wrk >/dev/null || { echo "wrk is missing: run tools/setup.sh" >&2; exit 1; }
[ -x "$coldbrew" ] || { echo "missing $coldbrew: run tools/build.sh first" >&2; exit 1; }
started=$(date +%s.%N)

work=$(mktemp -d)
pids=()  # servers started here; each leads its own process group
stop_server() {
  local pid=$1
  kill -INT "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL -- "-$pid" 2>/dev/null || true
  # Environments lead process groups of their own; end whatever of the tree is left.
  for p in $(descendants "$pid"); do kill -KILL "$p" 2>/dev/null || true; done
  wait "$pid" 2>/dev/null || true
}
cleanup() {
  local p
  for p in "${pids[@]}"; do stop_server "$p"; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# descendants PID: the pids below PID (not PID itself), from /proc/*/stat.
descendants() {
  # cat, not awk over the files: a process that ends mid-scan must not stop the scan.
  cat /proc/[0-9]*/stat 2>/dev/null | awk -v root="$1" '
    { s = $0; sub(/^.*\) /, "", s); split(s, f, " "); pp[$1 + 0] = f[2] }
    END {
      n = 1; todo[1] = root
      while (n > 0) { p = todo[n--]; for (c in pp) if (pp[c] == p) { print c; todo[++n] = c } }
    }' | grep -v "^$1\$" || true
}

# tree_cpu_ticks PID: utime+stime of PID and its live descendants, plus what their reaped
# children used (cutime+cstime), in clock ticks.
tree_cpu_ticks() {
  local total=0 p t
  for p in "$1" $(descendants "$1"); do
    t=$(awk '{ s = $0; sub(/^.*\) /, "", s); split(s, f, " "); print f[12] + f[13] + f[14] + f[15] }' \
          "/proc/$p/stat" 2>/dev/null || true)
    total=$((total + ${t:-0}))
  done
  echo "$total"
}

# machine: "busy_ticks ctxt" from /proc/stat.
machine() {
  awk '$1 == "cpu" { b = $2 + $3 + $4 + $7 + $8 + $9 } $1 == "ctxt" { c = $2 } END { print b, c }' /proc/stat
}
hz=$(getconf CLK_TCK)

# envs_of PID COMMAND_WORD: "count mean_rss_mb mean_pss_mb" of PID's descendants whose
# command line has COMMAND_WORD. RSS counts the interpreter's binary pages, which every
# environment shares; PSS (/proc/<pid>/smaps_rollup) divides shared pages among their users,
# so its sum is the memory the environments really take.
envs_of() {
  local p n=0 kb=0 pkb=0 r s
  for p in $(descendants "$1"); do
    tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q -- "$2" || continue
    r=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$p/status" 2>/dev/null || true)
    s=$(awk '$1 == "Pss:" { print $2 }' "/proc/$p/smaps_rollup" 2>/dev/null || true)
    [ -n "$r" ] || continue
    n=$((n + 1)); kb=$((kb + r)); pkb=$((pkb + ${s:-0}))
  done
  awk -v n="$n" -v kb="$kb" -v p="$pkb" 'BEGIN { printf "%d %.1f %.1f", n, n ? kb / n / 1024 : 0, n ? p / n / 1024 : 0 }'
}

# wait_port LOG REGEX PID: the port printed in LOG, waiting up to 30 s.
wait_port() {
  local port=""
  for _ in $(seq 300); do
    port=$(grep -o -E "$2" "$1" 2>/dev/null | head -1 | grep -o -E '[0-9]+$' || true)
    [ -n "$port" ] && break
    kill -0 "$3" 2>/dev/null || break
    sleep 0.1
  done
  echo "$port"
}

# measure LABEL PID URL C MATCH: warm-up, then one measured wrk run; prints one row and sets
# last_rps / last_cpu (server ms per request).
row() { printf '%-22s %5s %9s %8s %8s %10s %10s %8s %5s %11s %5s\n' "$@"; }
measure() {
  local label=$1 pid=$2 url=$3 c=$4 match=$5
  local threads=$((c < 2 ? c : 2))
  wrk -t "$threads" -c "$c" -d "${warmup}s" "$url" >/dev/null 2>&1 || true
  local m0 t0 out m1 t1
  m0=$(machine); t0=$(tree_cpu_ticks "$pid")
  out=$(wrk -t "$threads" -c "$c" -d "${duration}s" --latency "$url" 2>&1 || true)
  t1=$(tree_cpu_ticks "$pid"); m1=$(machine)
  read -r b0 x0 <<<"$m0"; read -r b1 x1 <<<"$m1"
  local n rps p50 p99 errs
  n=$(awk '/requests in/ { print $1 }' <<<"$out")
  rps=$(awk '/^Requests\/sec:/ { print $2 }' <<<"$out")
  ms() { awk -v k="$1" '$1 == k { v = $2; u = v; gsub(/[0-9.]/, "", u); sub(/[a-z]+$/, "", v);
         printf "%.2f", u == "us" ? v / 1000 : u == "s" ? v * 1000 : u == "m" ? v * 60000 : v }' <<<"$out"; }
  p50=$(ms 50%); p99=$(ms 99%)
  errs=$(awk '/Non-2xx/ { e += $NF } /Socket errors/ { gsub(/[^0-9 ]/, " "); for (i = 1; i <= NF; i++) e += $i }
              END { print e + 0 }' <<<"$out")
  if [ -z "$n" ] || [ "$n" = 0 ]; then
    row "$label" "$c" "-" "-" "-" "-" "-" "-" "-" "-" "no requests served"
    last_rps=0 last_cpu=0
    return
  fi
  local cpu_machine cpu_server cs env
  cpu_machine=$(awk -v d=$((b1 - b0)) -v n="$n" -v hz="$hz" 'BEGIN { printf "%.3f", d * 1000 / hz / n }')
  cpu_server=$(awk -v d=$((t1 - t0)) -v n="$n" -v hz="$hz" 'BEGIN { printf "%.3f", d * 1000 / hz / n }')
  cs=$(awk -v d=$((x1 - x0)) -v n="$n" 'BEGIN { printf "%.1f", d / n }')
  env=$(envs_of "$pid" "$match")
  local en er ep
  read -r en er ep <<<"$env"
  row "$label" "$c" "$rps" "$p50" "$p99" "$cpu_machine" "$cpu_server" "$cs" "$en" "$er/$ep" "$errs"
  last_rps=$rps last_cpu=$cpu_server
}

# ---- the app ---------------------------------------------------------------------------------
app=$work/app
mkdir -p "$app/node" "$app/python"
cat > "$app/node/index.js" <<'EOF'
exports.handler = async () => ({ statusCode: 200, body: '{"ok":true}' });
EOF
cat > "$app/python/app.py" <<'EOF'
def handler(event, context):
    return {"statusCode": 200, "body": '{"ok":true}'}
EOF
cat > "$app/template.yaml" <<EOF
AWSTemplateFormatVersion: "2010-09-09"
Transform: AWS::Serverless-2016-10-31
Description: tools/bench/concurrency.sh — a trivial function per runtime behind an HTTP API route.
Globals:
  Function:
    MemorySize: $memory
    Timeout: 30
Resources:
  BenchNative:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: provided.al2023
      CodeUri: $native_dir
      Handler: bootstrap
      Events:
        Api:
          Type: HttpApi
          Properties: {Path: /native, Method: get}
  BenchNode:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: nodejs20.x
      CodeUri: node/
      Handler: index.handler
      Events:
        Api:
          Type: HttpApi
          Properties: {Path: /node, Method: get}
  BenchPython:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: python3.12
      CodeUri: python/
      Handler: app.handler
      Events:
        Api:
          Type: HttpApi
          Properties: {Path: /python, Method: get}
EOF
printf 'seed: 1\ntime_scale: 1\nmax_environments: 300\nstandby: 0\n' > "$app/coldbrew.yaml"

# A pyenv shim runs pyenv before every interpreter start; give handlers the interpreter itself.
if [[ $(command -v python3 || true) == */shims/python3 ]] && real_python=$(pyenv which python3 2>/dev/null); then
  export PATH="$(dirname "$real_python"):$PATH"
fi

# start_coldbrew DIR LOG: starts coldbrew up on DIR, sets cb_pid and cb_port.
start_coldbrew() {
  setsid "$coldbrew" --log-level warn up "$1" --port 0 --invoke-port 0 --admin-port 0 >"$2" 2>&1 &
  cb_pid=$!
  pids+=("$cb_pid")
  cb_port=$(wait_port "$2" 'gateway listening on http://[0-9.]*:[0-9]+' "$cb_pid")
  if [ -z "$cb_port" ]; then
    echo "coldbrew did not start:" >&2
    tail -5 "$2" >&2
    exit 1
  fi
}
forget() { local keep=() p; for p in "${pids[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done; pids=("${keep[@]}"); }

# ---- the peer ------------------------------------------------------------------------------
peer_pid="" peer_port=""
if [ "$peer" = 1 ]; then
  mkdir -p "$peer_dir"
  if [ ! -x "$peer_dir/node_modules/.bin/serverless" ] || [ ! -d "$peer_dir/node_modules/serverless-offline" ]; then
    echo "installing serverless@3 and serverless-offline@12 into $peer_dir"
    [ -f "$peer_dir/package.json" ] || echo '{"name":"coldbrew-bench-peer","private":true}' > "$peer_dir/package.json"
    (cd "$peer_dir" && npm install --no-audit --no-fund --silent serverless@3 serverless-offline@12 >/dev/null)
  fi
  pdir=$work/peer
  # Free loopback ports for its HTTP and Lambda listeners (it takes no port 0).
  free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
  http_port=$(free_port) lambda_port=$(free_port)
  mkdir -p "$pdir"
  cp "$app/node/index.js" "$pdir/"
  ln -s "$peer_dir/node_modules" "$pdir/node_modules"
  cat > "$pdir/serverless.yml" <<'EOF'
service: coldbrew-bench-peer
frameworkVersion: "3"
provider: {name: aws, runtime: nodejs20.x, region: us-east-1, memorySize: 1024}
plugins: [serverless-offline]
functions:
  node:
    handler: index.handler
    events:
      - httpApi: {path: /node, method: get}
EOF
  (cd "$pdir" && SLS_TELEMETRY_DISABLED=1 SLS_NOTIFICATIONS_MODE=off \
     NODE_OPTIONS=--no-experimental-require-module AWS_ACCESS_KEY_ID=x AWS_SECRET_ACCESS_KEY=x \
     exec setsid node_modules/.bin/serverless offline start --host 127.0.0.1 --httpPort "$http_port" \
       --lambdaPort "$lambda_port" --noPrependStageInUrl --useInProcess > "$work/peer.log" 2>&1) &
  peer_pid=$!
  pids+=("$peer_pid")
  # serverless-offline says "Server ready: http://127.0.0.1:PORT" once it listens.
  peer_port=$(wait_port "$work/peer.log" "Server ready: http://[^ ]*:$http_port" "$peer_pid")
  if [ -z "$peer_port" ]; then
    echo "serverless-offline did not start:" >&2; tail -20 "$work/peer.log" >&2; exit 1
  fi
  peer_version=$(node -p "require('$peer_dir/node_modules/serverless-offline/package.json').version")
fi

echo "concurrency: ${duration} s per run after ${warmup} s of warm-up, ${memory} MB, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
row handler conns "req/s" "p50 ms" "p99 ms" "cpu/req mc" "cpu/req sv" "cs/req" envs "rss/pss MB" err
row ------- ----- ----- ------ ------ ---------- ---------- ------ ---- ------- ---
ratios=()
for runtime in "${runtimes[@]}"; do
  case $runtime in
    provided) path=/native match="$native_dir/bootstrap" ;;
    nodejs20.x) path=/node match=bootstrap.cjs ;;
    python3.12) path=/python match=bootstrap.py ;;
    *) echo "unknown runtime '$runtime' (RUNTIMES: provided nodejs20.x python3.12)" >&2; exit 2 ;;
  esac
  if [ "$runtime" = provided ] && [ ! -x "$native_dir/bootstrap" ]; then
    echo "missing $native_dir/bootstrap: cmake --build build --target hello_cpp_bootstrap" >&2; exit 1
  fi
  start_coldbrew "$app" "$work/up-$runtime.log"
  for c in "${conns[@]}"; do
    measure "coldbrew $runtime" "$cb_pid" "http://127.0.0.1:$cb_port$path" "$c" "$match"
    if [ "$peer" = 1 ] && [ "$runtime" = nodejs20.x ]; then
      cb_rps=$last_rps cb_cpu=$last_cpu
      measure "sls-offline $peer_version" "$peer_pid" "http://127.0.0.1:$peer_port/node" "$c" index
      ratios+=("$(awk -v c="$c" -v a="$cb_rps" -v b="$last_rps" -v x="$cb_cpu" -v y="$last_cpu" 'BEGIN {
        printf "%4d conns: req/s coldbrew/peer %.2fx, server cpu per request coldbrew/peer %.2fx", c,
          (b > 0 ? a / b : 0), (y > 0 ? x / y : 0) }')")
    fi
  done
  stop_server "$cb_pid"; forget "$cb_pid"
done
for r in "${ratios[@]}"; do echo "$r"; done

# ---- memory of a large stack -------------------------------------------------------------------
if [ "$stack" = 1 ] && [ "$stack_functions" -gt 0 ]; then
  big=$work/stack
  mkdir -p "$big/node"
  cp "$app/node/index.js" "$big/node/"
  {
    printf 'AWSTemplateFormatVersion: "2010-09-09"\nTransform: AWS::Serverless-2016-10-31\n'
    printf 'Globals:\n  Function:\n    MemorySize: 128\n    Runtime: nodejs20.x\n    CodeUri: node/\n    Handler: index.handler\nResources:\n'
    for i in $(seq "$stack_functions"); do
      printf '  Fn%d:\n    Type: AWS::Serverless::Function\n    Properties:\n      Events:\n        Api:\n          Type: HttpApi\n          Properties: {Path: /f%d, Method: get}\n' "$i" "$i"
    done
  } > "$big/template.yaml"
  printf 'seed: 1\nstandby: 0\n' > "$big/coldbrew.yaml"
  [ -z "${STACK_BUDGET_MB:-}" ] || printf 'memory_budget_mb: %s\n' "$STACK_BUDGET_MB" >> "$big/coldbrew.yaml"
  t0=$(date +%s.%N)
  start_coldbrew "$big" "$work/up-stack.log"
  t1=$(date +%s.%N)
  failed=0
  for i in $(seq "$stack_functions"); do
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 30 "http://127.0.0.1:$cb_port/f$i" || true)
    [ "$code" = 200 ] || failed=$((failed + 1))
  done
  sleep 1  # let the last environments settle back to idle before reading their RSS
  cb_rss=$(awk '$1 == "VmRSS:" { printf "%.1f", $2 / 1024 }' "/proc/$cb_pid/status")
  read -r n mean pss <<<"$(envs_of "$cb_pid" bootstrap.cjs)"
  awk -v f="$stack_functions" -v s="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" \
      -v cb="$cb_rss" -v n="$n" -v m="$mean" -v p="$pss" -v failed="$failed" -v budget="${STACK_BUDGET_MB:-none}" 'BEGIN {
    printf "stack of %d nodejs20.x functions (128 MB, memory_budget_mb %s): listening after %.2f s, coldbrew %.1f MB RSS\n", f, budget, s, cb
    printf "  after one request each (%d failed): %d environments, RSS %.1f MB each (%.2f GB summed), PSS %.1f MB each (%.2f GB in all)\n",
      failed, n, m, (n * m + cb) / 1024, p, (n * p + cb) / 1024 }'
  stop_server "$cb_pid"; forget "$cb_pid"
fi
awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "total time: %.1f s\n", b - a }'
