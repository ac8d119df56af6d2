#!/usr/bin/env bash
# Benchmark: a burst of first requests against a cold stack. Does the first invocation of each
# new execution environment take the modeled Init Duration, however many local processes start
# at once on this machine?
#
#   tools/bench/burst.sh [N…]        (default N = 16 50 100; after tools/build.sh)
#
# Environment: SEED (default 1), MORE (requests per connection after the first, default 10),
# RUN_TIMEOUT (seconds for one burst, default 180), COLDBREW (the binary, default
# build/coldbrew), RUNTIMES and VPCS (subsets of "nodejs20.x python3.12" and
# "hyperplane legacy-eni").
#
# For each runtime (nodejs20.x, python3.12 run by the local python3) × VPC mode (hyperplane,
# legacy-eni) × N × standby (the default of 1 per function; or N for the function under test
# and none for the other, the row labelled --standby), it starts a fresh
# `coldbrew up` (time_scale 1, max_environments N, seeded) on a generated app whose functions
# (1,024 MB) sit behind HTTP API routes, opens N connections, sends one request on each at the
# same moment, then MORE requests on each, and stops coldbrew. One row per run:
#   model     the modeled cold start p50/p95/p99 from `coldbrew validate` ("burst": its
#             "burst of N" figure, printed for legacy-eni; "isolated": one cold start alone,
#             when the build prints no burst figure)
#   first     the N first requests' end-to-end latency p50/p95/p99, as the clients saw it
#   all       every request's p50/p95
#   cold      cold starts counted by coldbrew (/metrics); err: requests without a 200
#   overruns  cold starts whose real local init overran the model, and by how much in total
#             (coldbrew_init_overruns_total, coldbrew_init_overrun_seconds_total)
#   target    with --standby N and N <= 50: first p50 and p95 each within 10% + 20 ms of the
#             model's, "ok" or "MISS"; "-" where no target applies
# Then notes (a missing burst figure, fewer standby environments ready than N, the Python
# interpreter used)
# and the script's total time.
# Where this build lacks a feature (--standby, the overrun counters, the burst figure) the row
# says n/a and why; features are detected from `coldbrew up --help`, /metrics and validate.
# Traffic goes to 127.0.0.1 only; every coldbrew (and its process group) ends with the script.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=build
coldbrew=${COLDBREW:-$build/coldbrew}
client=$build/tools/bench/bench_load_client
seed=${SEED:-1}
more=${MORE:-10}
run_timeout=${RUN_TIMEOUT:-180}
read -r -a runtimes <<<"${RUNTIMES:-nodejs20.x python3.12}"
read -r -a vpcs <<<"${VPCS:-hyperplane legacy-eni}"
for f in "$client" "$coldbrew"; do
  [ -x "$f" ] || { echo "missing $f: run tools/build.sh first" >&2; exit 1; }
done
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(16 50 100)
for n in "${sizes[@]}"; do
  [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "N must be a positive whole number, got '$n'" >&2; exit 2; }
done
started=$(date +%s.%N)

work=$(mktemp -d)
cb_pid=""
# Ends the running coldbrew: SIGINT (it drains for up to 2 s and ends its handlers), then
# SIGKILL to its whole process group if it is still there after 15 s, and in any case to
# whatever is left in the group.
stop_coldbrew() {
  [ -n "$cb_pid" ] || return 0
  kill -INT "$cb_pid" 2>/dev/null || true
  for _ in $(seq 150); do kill -0 "$cb_pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL -- "-$cb_pid" 2>/dev/null || true
  wait "$cb_pid" 2>/dev/null || true
  cb_pid=""
}
cleanup() { stop_coldbrew; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

if "$coldbrew" up --help 2>&1 | grep -q -- '--standby'; then has_standby=1; else has_standby=0; fi
# A pyenv shim is a shell script that runs pyenv before Python: about 1.7 s per start on a
# loaded 2-core machine, against 0.3 s for the interpreter itself. The burst is about
# coldbrew's cold starts, not the shim's, so handlers get the interpreter the shim resolves to.
python_note=""
if [[ $(command -v python3 || true) == */shims/python3 ]] && real_python=$(pyenv which python3 2>/dev/null); then
  export PATH="$(dirname "$real_python"):$PATH"
  python_note="python3 is a pyenv shim; handlers run $real_python directly"
fi

# The app: one function per runtime, each behind an HTTP API route (payload 2.0).
app=$work/app
mkdir -p "$app/node" "$app/python"
cat > "$app/node/index.mjs" <<'EOF'
export const handler = async () => ({ statusCode: 200, body: '{"ok":true}' });
EOF
cat > "$app/python/app.py" <<'EOF'
def handler(event, context):
    return {"statusCode": 200, "body": '{"ok":true}'}
EOF
cat > "$app/template.yaml" <<'EOF'
AWSTemplateFormatVersion: "2010-09-09"
Transform: AWS::Serverless-2016-10-31
Description: tools/bench/burst.sh — a trivial function per runtime behind an HTTP API route.
Globals:
  Function:
    MemorySize: 1024
    Timeout: 30
Resources:
  BurstNode:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: nodejs20.x
      CodeUri: node/
      Handler: index.handler
      Events:
        Api:
          Type: HttpApi
          Properties: {Path: /node, Method: get}
  BurstPython:
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

# write_options VPC N: both functions in that VPC mode, room for N environments each. The seed
# is in the file too, so `validate` draws the same model percentiles `up` is run with.
# write_options VPC N [FUNCTION STANDBY]: coldbrew.yaml for one run; with FUNCTION, it gets
# STANDBY standby environments and the other function none, so only the function under test
# starts spare processes.
write_options() {
  printf 'seed: %s\ntime_scale: 1\nmax_environments: %s\nfunctions:\n' "$seed" "$2" > "$app/coldbrew.yaml"
  local f
  for f in BurstNode BurstPython; do
    printf '  %s:\n    vpc: %s\n' "$f" "$1" >> "$app/coldbrew.yaml"
    if [ -n "${3:-}" ]; then
      printf '    standby: %s\n' "$([ "$f" = "$3" ] && echo "$4" || echo 0)" >> "$app/coldbrew.yaml"
    fi
  done
}

# model FUNCTION N: "p50 p95 p99 basis" in ms from `coldbrew validate`; basis is "burst" when
# the function's block has a "burst of N" line, else "isolated".
model() {
  "$coldbrew" validate "$app" 2>&1 | awk -v fn="$1" -v n="$2" '
    function pct(line, name,   v) {
      if (!match(line, name " [0-9.]+ (ms|s)")) return "";
      split(substr(line, RSTART, RLENGTH), v, " ");
      return v[3] == "s" ? v[2] * 1000 : v[2];
    }
    $1 == fn && $2 == "cold" && $3 == "start" { inside = 1; iso = pct($0, "p50") " " pct($0, "p95") " " pct($0, "p99"); next }
    inside && /^  [^ ]/ { inside = 0 }
    inside && $0 ~ ("burst of " n "([^0-9]|$)") && pct($0, "p50") != "" {
      # The burst line gives p50, p95 and max: no p99, which must still take its field.
      p99 = pct($0, "p99"); burst = pct($0, "p50") " " pct($0, "p95") " " (p99 == "" ? "-" : p99)
    }
    END { if (burst != "") print burst " burst"; else if (iso != "") print iso " isolated" }'
}

# metric TEXT NAME FUNCTION: the sample's value, or "" when the family is absent.
metric() {
  { grep -E "^$2\{[^}]*function=\"$3\"" <<<"$1" || true; } |
    awk '{ s += $NF; found = 1 } END { if (found) print s }'
}

echo "burst of first requests, seed $seed, time_scale 1, $more more requests per connection"
notes=()
[ -z "$python_note" ] || notes+=("$python_note")
fmt3() { printf '%s/%s/%s' "${1%.*}" "${2%.*}" "${3%.*}"; }
row() { printf '%-10s %-10s %4s %-9s %-26s %-18s %-12s %5s %4s %-22s %s\n' "$@"; }
row runtime vpc N standby "model p50/p95/p99 ms" "first p50/p95/p99" "all p50/p95" cold err overruns target
row ------- --- - ------- -------------------- ----------------- ----------- ---- --- -------- ------

# run RUNTIME FUNCTION PATH VPC N STANDBY(default|N)
run() {
  local runtime=$1 fn=$2 path=$3 vpc=$4 n=$5 standby=$6
  local label="default" args=() target="-"
  if [ "$standby" != default ]; then
    label="--standby"
    if [ "$has_standby" = 0 ]; then
      row "$runtime" "$vpc" "$n" "$label" "-" "-" "-" "-" "-" "-" "n/a (this build has no --standby)"
      return
    fi
    write_options "$vpc" "$n" "$fn" "$n"
  else
    write_options "$vpc" "$n"
  fi
  local m
  m=$(model "$fn" "$n")
  read -r m50 m95 m99 basis <<<"${m:-0 0 0 none}"
  log=$work/up.log
  setsid "$coldbrew" --log-level warn up "$app" --port 0 --invoke-port 0 --admin-port 0 \
    --seed "$seed" --time-scale 1 "${args[@]}" > "$log" 2>&1 &
  cb_pid=$!
  for _ in $(seq 300); do
    grep -q "admin API listening" "$log" 2>/dev/null && break
    kill -0 "$cb_pid" 2>/dev/null || break
    sleep 0.1
  done
  local port admin
  port=$(grep -o 'gateway listening on http://[0-9.]*:[0-9]*' "$log" | sed 's/.*://' || true)
  admin=$(grep -o 'admin API listening on http://[0-9.]*:[0-9]*' "$log" | sed 's/.*://' || true)
  if [ -z "$port" ] || [ -z "$admin" ]; then
    stop_coldbrew
    row "$runtime" "$vpc" "$n" "$label" "-" "-" "-" "-" "-" "-" "coldbrew did not start"
    sed 's/^/    /' "$log" | tail -5
    return
  fi
  if [ "$standby" != default ]; then
    # coldbrew reports its ports once the standby environments have finished their init;
    # /metrics says how many are ready.
    local ready
    ready=$(curl -s --max-time 5 "http://127.0.0.1:$admin/metrics" |
            awk -v fn="$fn" '$1 == "coldbrew_standby_environments{function=\"" fn "\",state=\"ready\"}" { print $2 }')
    [ "${ready:-0}" -ge "$n" ] ||
      notes+=("$runtime $vpc N=$n --standby: only ${ready:-0} standby environments ready when the burst was sent")
  fi
  local out
  out=$(timeout "$run_timeout" "$client" burst "$port" "$path" "$n" "$more" || true)
  local metrics
  metrics=$(curl -s --max-time 5 "http://127.0.0.1:$admin/metrics" || true)
  stop_coldbrew
  if [[ $out != burst* ]]; then
    row "$runtime" "$vpc" "$n" "$label" "-" "-" "-" "-" "-" "-" "burst did not finish within ${run_timeout} s"
    return
  fi
  field() { grep -o " $1=[0-9.]*" <<<"$out" | cut -d= -f2; }
  local cold overruns over_s over_text
  cold=$(metric "$metrics" coldbrew_cold_starts_total "$fn")
  overruns=$(metric "$metrics" coldbrew_init_overruns_total "$fn")
  over_s=$(metric "$metrics" coldbrew_init_overrun_seconds_total "$fn")
  if [ -n "$overruns" ]; then
    over_text=$(printf '%s, %.2f s' "${overruns%.*}" "${over_s:-0}")
  else
    over_text="n/a (no counters)"
  fi
  if [ "$standby" != default ] && [ "$n" -le 50 ]; then
    target=$(awk -v o50="$(field first_p50)" -v o95="$(field first_p95)" -v m50="$m50" -v m95="$m95" '
      function near(o, m) { d = o - m; if (d < 0) d = -d; return d <= 0.1 * m + 20 }
      BEGIN { print (near(o50, m50) && near(o95, m95)) ? "ok" : "MISS" }')
  fi
  row "$runtime" "$vpc" "$n" "$label" "$(fmt3 "$m50" "$m95" "$m99") $basis" \
    "$(fmt3 "$(field first_p50)" "$(field first_p95)" "$(field first_p99)")" \
    "$(printf '%s/%s' "$(field all_p50 | cut -d. -f1)" "$(field all_p95 | cut -d. -f1)")" \
    "${cold:-?}" "$(field errors)" "$over_text" "$target"
  if [ "$vpc" = legacy-eni ] && [ "$basis" != burst ]; then
    notes+=("$runtime legacy-eni N=$n: validate printed no \"burst of $n\" figure; model is one isolated cold start")
  fi
}

for runtime in "${runtimes[@]}"; do
  case $runtime in
    nodejs20.x) fn=BurstNode path=/node ;;
    python3.12) fn=BurstPython path=/python ;;
    *) echo "unknown runtime '$runtime' (RUNTIMES: nodejs20.x python3.12)" >&2; exit 2 ;;
  esac
  for vpc in "${vpcs[@]}"; do
    case $vpc in hyperplane | legacy-eni) ;; *) echo "unknown VPC mode '$vpc'" >&2; exit 2 ;; esac
    for n in "${sizes[@]}"; do
      for standby in default "$n"; do
        run "$runtime" "$fn" "$path" "$vpc" "$n" "$standby"
      done
    done
  done
done
for note in "${notes[@]}"; do echo "note: $note"; done
awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "total time: %.1f s\n", b - a }'
