#!/usr/bin/env bash
# Installs everything coldbrew's build, tests and examples need: Debian 12 packages, then the
# npm packages pinned by the package-lock.json files listed below. Idempotent: packages already
# present are skipped, apt is not touched when nothing is missing, and npm is not run for a
# folder whose node_modules already holds every version its lock file names.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

packages=(
  build-essential cmake ninja-build pkg-config   # toolchain
  libboost-dev                                   # Beast / Asio (header-only)
  libuv1-dev                                     # the event loop
  nlohmann-json3-dev libyaml-cpp-dev libspdlog-dev libcli11-dev
  catch2                                         # tests (v2 in Debian 12)
  curl                                           # the bash `provided` example runtime
  zlib1g-dev                                     # zipped size of deployment packages
  libssl-dev                                     # JWT authorizers: signatures, JWKS over https
  libarchive-dev                                 # layers given as .zip files
  tzdata                                         # schedules' time zones (/usr/share/zoneinfo)
  libxml2-utils                                  # xmllint: coldbrew test's JUnit report checked against its schema
  dpkg-dev                                       # dpkg-shlibdeps: the Debian package's dependencies (cpack -G DEB)
  wrk                                            # tools/bench/concurrency.sh: HTTP load at 1 to 64 connections
  clang-16 libclang-rt-16-dev                    # the fuzz harnesses and the sanitizer lane (libFuzzer, ASan, UBSan);
                                                 # clang 16: clang 14 cannot capture structured bindings in lambdas
  llvm                                           # llvm-symbolizer: sanitizer reports with file and line
)
# Interpreters for the nodejs* and python3* shims: any version already on PATH will do.
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)
command -v python3 >/dev/null 2>&1 || packages+=(python3)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
else
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# npm folders, each with a committed package.json and package-lock.json: the AWS SDK for
# JavaScript that the Invoke API tests drive coldbrew with, and the fan-out examples' own
# copies (a handler resolves packages from its code directory, as on Lambda).
npm_dirs=(
  tests/integration/sdk
  examples/fanout/orchestrator
  examples/fanout-etl/orchestrator
)
# npm folders whose devDependencies are not needed to run: the SAM TypeScript hello-world
# (its esbuild is a dependency; jest, eslint and typescript are devDependencies).
npm_dirs_omit_dev=(
  examples/hello-ts/hello-world
)

# True when every package the lock file names is installed at the locked version; with
# "omit-dev" as second argument, devDependencies (lock entries marked dev) are not required.
npm_installed() {
  node -e '
    const fs = require("fs"), path = require("path");
    const dir = process.argv[1];
    const omit_dev = process.argv[2] === "omit-dev";
    const lock = JSON.parse(fs.readFileSync(path.join(dir, "package-lock.json"), "utf8"));
    for (const [where, entry] of Object.entries(lock.packages || {})) {
      if (!where.startsWith("node_modules/")) continue;
      if (omit_dev && entry.dev) continue;
      let installed;
      try {
        installed = JSON.parse(fs.readFileSync(path.join(dir, where, "package.json"), "utf8")).version;
      } catch {
        if (entry.optional) continue;  // not for this platform
        process.exit(1);
      }
      if (installed !== entry.version) process.exit(1);
    }
  ' "$1" "${2:-}"
}

for d in "${npm_dirs[@]}"; do
  if ! npm_installed "$root/$d"; then
    echo "setup: npm ci in $d"
    (cd "$root/$d" && npm ci --no-audit --no-fund)
  fi
done
for d in "${npm_dirs_omit_dev[@]}"; do
  if ! npm_installed "$root/$d" omit-dev; then
    echo "setup: npm ci --omit=dev in $d"
    (cd "$root/$d" && npm ci --omit=dev --no-audit --no-fund)
  fi
done
