#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (unit and integration) with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
if [ "${CI:-}" = "true" ]; then
  tools/build.sh -DCOLDBREW_WERROR=ON
else
  tools/build.sh
fi
cd build
ctest --output-on-failure -j "${JOBS:-2}" "$@"
