#!/usr/bin/env bash
# Builds coldbrew's Debian package from a configured and built build directory, unpacks it
# into a scratch root (dpkg -x: what dpkg -i would install, without touching the system) and
# runs the installed binary from there: its version, and one invocation of a Node.js and a
# Python function, which needs the runtime shims found beside the installed binary.
#   tools/check_deb.sh BUILD_DIR
set -euo pipefail
build="$(cd "$1" && pwd)"
root="$(cd "$(dirname "$0")/.." && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
(cd "$scratch" && cpack -G DEB --config "$build/CPackConfig.cmake" >/dev/null)
deb="$(ls "$scratch"/coldbrew_*.deb)"
dpkg-deb --field "$deb" Package Version Depends
dpkg -x "$deb" "$scratch/root"
bin="$scratch/root/usr/bin/coldbrew"
test -f "$scratch/root/usr/share/coldbrew/runtimes/node/bootstrap.cjs"
test -f "$scratch/root/usr/share/coldbrew/runtimes/python/bootstrap.py"
"$bin" --version | grep -q '^coldbrew '
# The shims are found relative to the installed binary, not in this source tree: the
# installed copies are marked, and each function's log must show the mark.
shims="$scratch/root/usr/share/coldbrew/runtimes"
sed -i "2i console.error('coldbrew-installed-shim');" "$shims/node/bootstrap.cjs"
sed -i "1i import sys; print('coldbrew-installed-shim', file=sys.stderr)" "$shims/python/bootstrap.py"
unset COLDBREW_RUNTIMES_DIR
for fn in HelloNode HelloPython; do
  out="$(cd "$scratch" && "$bin" invoke "$fn" -t "$root/examples/hello" --time-scale 0.01 2>"$scratch/invoke.log")" ||
    { cat "$scratch/invoke.log" >&2; exit 1; }
  grep -q "coldbrew-installed-shim" "$scratch/invoke.log" ||
    { echo "check_deb: $fn did not run the installed shim" >&2; cat "$scratch/invoke.log" >&2; exit 1; }
  echo "$fn: $out"
done
echo "check_deb: $(basename "$deb") installs and runs"
