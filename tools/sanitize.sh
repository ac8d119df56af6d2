#!/usr/bin/env bash
# The sanitizer lane: unit suites built with clang, ASan and UBSan (-O1, any finding aborts,
# LeakSanitizer on) and run, then every fuzz harness for a few seconds on its seeds (a smoke
# test: no timing is asserted). Everything is built once, in build-fuzz/, from one set of
# sanitized libraries shared by the harnesses and the tests (tools/fuzz.sh).
#
#   tools/sanitize.sh                 the suites below, then tools/fuzz.sh all $FUZZ_SECONDS (5)
#
# Which suites: those whose libraries the fuzz harnesses already need (models, config,
# gateway, runtime_api, invoke with functions and scheduler, admin with telemetry), so the
# lane compiles only their test files, plus the cheap ones that parse or encode bytes (codec,
# authorizers, jwt). Left to the normal build: http and proxy (Beast and real sockets; each
# suite adds minutes of sanitized compile), front, states, sim, report, build, watch, cli,
# schedules, supervisor: their parsers are covered above or they run processes, and the whole
# CI run must stay under 30 minutes on 2 cores (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
suites=(${SANITIZE_SUITES:-models codec config gateway runtime_api invoke admin})
build="${FUZZ_BUILD_DIR:-$PWD/build-fuzz}"

# Configures and builds build-fuzz/ and smoke-runs nothing yet: 0 seconds builds only.
FUZZ_BUILD_DIR="$build" tools/fuzz.sh build
targets=()
for s in "${suites[@]}"; do targets+=("unit_$s"); done
nice cmake --build "$build" -j "${JOBS:-2}" --target "${targets[@]}"

export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_stack_use_after_return=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
symbolizer="$(command -v llvm-symbolizer-16 || command -v llvm-symbolizer || true)"
[ -n "$symbolizer" ] && export ASAN_SYMBOLIZER_PATH="$symbolizer"
regex="^unit\\.($(IFS='|'; echo "${suites[*]}"))\$"
ctest --test-dir "$build" --output-on-failure -j "${JOBS:-2}" -R "$regex"

FUZZ_BUILD_DIR="$build" tools/fuzz.sh all "${FUZZ_SECONDS:-5}"
