#!/usr/bin/env bash
# Builds (if needed) and runs one libFuzzer harness of tools/fuzz for SECONDS seconds, then
# prints its executions, coverage (cov: edges, ft: features) and crashes.
#
#   tools/fuzz.sh TARGET SECONDS     one target, e.g. tools/fuzz.sh distribution 600
#   tools/fuzz.sh all SECONDS        every target in turn, SECONDS each (the CI smoke run)
#   tools/fuzz.sh build              configure and build every target, run none
#   tools/fuzz.sh list               the targets
#
# The build lives in build-fuzz/ (clang with -fsanitize=fuzzer,address,undefined; $FUZZ_CXX
# names the compiler, default clang++-16). Each target's corpus grows in
# build-fuzz/fuzz-corpus/TARGET, seeded from tools/fuzz/seeds and the tests' fixtures
# (tools/fuzz/make_seeds.py); crashing inputs land in build-fuzz/fuzz-crashes/TARGET. Runs one
# process at a time, niced. Exit status 1 when a target crashed (or leaked, or timed out).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
build="${FUZZ_BUILD_DIR:-$root/build-fuzz}"
targets=(gateway_event gateway_response runtime_api invoke_api admin_api sam_template
         serverless_yml coldbrew_yaml scenario distribution)

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 2; }
[ $# -ge 1 ] || usage
if [ "$1" = list ]; then printf '%s\n' "${targets[@]}"; exit 0; fi
if [ "$1" = build ] && [ $# -eq 1 ]; then
  target=all seconds=
else
  [ $# -eq 2 ] || usage
  target="$1" seconds="$2"
  [[ "$seconds" =~ ^[0-9]+$ ]] || usage
fi
if [ "$target" != all ] && ! printf '%s\n' "${targets[@]}" | grep -qx -- "$target"; then
  echo "fuzz: unknown target '$target' (tools/fuzz.sh list)" >&2; exit 2
fi

if [ ! -f "$build/build.ninja" ]; then
  cxx="${FUZZ_CXX:-clang++-16}"
  launcher=()
  command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_COMPILER="$cxx" \
    -DCOLDBREW_FUZZ=ON -DCOLDBREW_EXAMPLES=OFF "${launcher[@]}" >/dev/null
fi
if [ -n "${FUZZ_NO_BUILD:-}" ]; then
  :  # run what is built (another build of build-fuzz/ is under way)
elif [ "$target" = all ]; then
  nice cmake --build "$build" -j "${JOBS:-2}" --target fuzz_targets
else
  nice cmake --build "$build" -j "${JOBS:-2}" --target "fuzz_$target"
fi
[ -n "$seconds" ] || exit 0
python3 tools/fuzz/make_seeds.py "$build/fuzz-corpus" >/dev/null

# Any sanitizer finding stops the run with a stack; LeakSanitizer is on (libFuzzer's default).
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_stack_use_after_return=1}"
symbolizer="$(command -v llvm-symbolizer-16 || command -v llvm-symbolizer || true)"
[ -n "$symbolizer" ] && export ASAN_SYMBOLIZER_PATH="$symbolizer"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

status=0
run() {
  local t="$1" corpus="$build/fuzz-corpus/$1" crashes="$build/fuzz-crashes/$1"
  local log="$build/fuzz-logs/$1.log"
  mkdir -p "$corpus" "$crashes" "$(dirname "$log")"
  local before; before=$(find "$crashes" -type f | wc -l)
  local mark="$build/fuzz-logs/.$t.start"; touch "$mark"
  local rc=0
  # -max_len 64 KiB: room for whole templates; -timeout 10 s per input counts as a finding.
  nice -n 10 "$build/tools/fuzz/fuzz_$t" "$corpus" -max_total_time="$seconds" \
    -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$crashes/" >"$log" 2>&1 || rc=$?
  local after; after=$(find "$crashes" -type f | wc -l)
  local execs cov ft
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$( (grep -o 'cov: [0-9]*' "$log" || true) | tail -1 | cut -d' ' -f2)
  ft=$( (grep -o 'ft: [0-9]*' "$log" || true) | tail -1 | cut -d' ' -f2)
  printf 'fuzz: %-17s executions %-10s cov %-6s ft %-6s crashes %s%s\n' "$t" "${execs:-?}" \
    "${cov:-?}" "${ft:-?}" "$((after - before))" "$([ $rc -ne 0 ] && echo " (exit $rc, log $log)")"
  if [ $rc -ne 0 ]; then
    grep -m1 -A25 'ERROR: \|runtime error\|==ERROR\|deadly signal\|uncaught exception' "$log" | head -40 >&2 || true
    find "$crashes" -type f -newer "$mark" -printf '  input: %p\n' >&2 || true
    status=1
  fi
}

if [ "$target" = all ]; then
  for t in "${targets[@]}"; do run "$t"; done
else
  run "$target"
fi
exit $status
