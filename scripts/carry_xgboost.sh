#!/usr/bin/env bash
# Unpacks XGBoost (the learned cost model's library) from Debian's packages
# into .deps/xgboost/{include,lib}, for a machine without a package manager
# (the GPU machines): carry .deps and scripts/gpu_check.sh builds with it
# (TESSERA_XGBOOST_ROOT, LD_LIBRARY_PATH). About 7 MB. Run on a Debian machine.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=.deps/xgboost
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download libxgboost0 libxgboost-dev libdmlc0 >/dev/null)
rm -rf "$dest" && mkdir -p "$dest/include" "$dest/lib"
for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$tmp/root"; done
cp -r "$tmp/root/usr/include/xgboost" "$dest/include/"
cp -a "$tmp"/root/usr/lib/x86_64-linux-gnu/libxgboost.so* "$tmp"/root/usr/lib/x86_64-linux-gnu/libdmlc.so* "$dest/lib/"
du -sh "$dest"
