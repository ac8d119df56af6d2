#!/usr/bin/env bash
# Installs everything coldbrew's build, tests and examples need, from Debian 12 packages.
# Idempotent: packages already present are skipped, and apt is not touched at all when
# nothing is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config   # toolchain
  libboost-dev                                   # Beast / Asio (header-only)
  libuv1-dev                                     # the event loop
  nlohmann-json3-dev libyaml-cpp-dev libspdlog-dev libcli11-dev
  catch2                                         # tests (v2 in Debian 12)
  curl                                           # the bash `provided` example runtime
  zlib1g-dev                                     # zipped size of deployment packages
)
# Interpreters for the nodejs* and python3* shims: any version already on PATH will do.
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v python3 >/dev/null 2>&1 || packages+=(python3)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "setup: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
