#!/usr/bin/env bash
# The sanitizer lane: unit suites built with clang, ASan and UBSan (-O1, any finding aborts,
# LeakSanitizer on) and run, then every fuzz harness for a few seconds on its seeds (a smoke
# test: no timing is asserted). Everything is built once, in build-fuzz/, from one set of
# sanitized libraries shared by the harnesses and the tests (tools/fuzz.sh).
#
#   tools/sanitize.sh                 the suites below, then tools/fuzz.sh all $FUZZ_SECONDS (5)
#
# Which suites: those of the front ends' protocol logic (codec, runtime_api, gateway, invoke,
# admin), whose libraries the fuzz harnesses need anyway, so the lane adds only their test
# files. The harnesses' libraries themselves (models, config with yaml-cpp, functions,
# telemetry) are most of the lane's build, and the whole CI run must stay under 30 minutes on
# 2 cores (.ci/run): the models and config suites (41 more test files) are left to the normal
# build, their parsers being fuzzed here (distribution, scenario, templates, coldbrew.yaml); so
# are http and proxy (Beast and real sockets), front, states, sim and the rest.
# SANITIZE_SUITES="models config …" runs others. Catch2's runner is left uninstrumented, and
# test code is built at -O0 (tests/CMakeLists.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
suites=(${SANITIZE_SUITES:-codec runtime_api gateway invoke admin})
build="${FUZZ_BUILD_DIR:-$PWD/build-fuzz}"

# Configures and builds build-fuzz/ and the harnesses; the smoke run comes last.
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
