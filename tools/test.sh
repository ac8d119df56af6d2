#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (unit and integration) with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
if [ "${CI:-}" = "true" ]; then
  # Line tables only (-g1): a crash's backtrace keeps file and line, and the build skips the
  # rest of the debug information (a fifth of its compile time), which CI never reads.
  tools/build.sh -DCOLDBREW_WERROR=ON -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
else
  tools/build.sh
fi
cd build
ctest --output-on-failure -j "${JOBS:-2}" "$@"
