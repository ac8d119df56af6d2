#!/usr/bin/env bash
# Configures and builds coldbrew into build/ (binary: build/coldbrew). Extra arguments go to
# CMake's configure step, e.g. -DCOLDBREW_SANITIZE=address,undefined.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" "$@" >/dev/null
cmake --build build -j "${JOBS:-2}"
