#!/usr/bin/env bash
# Unpacks XGBoost (the learned cost model's library) from Debian's packages
# into .deps/xgboost/{include,lib}, for a machine without a package manager
# (the GPU machines): carry .deps and scripts/gpu_check.sh builds with it
# (TESSERA_XGBOOST_ROOT). About 7 MB. Run on a Debian machine with patchelf.
# libxgboost finds libdmlc beside it ($ORIGIN): a binary's RUNPATH finds only
# its own dependencies, so without this every run needed LD_LIBRARY_PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v patchelf >/dev/null || { echo "carry_xgboost.sh needs patchelf (apt-get install patchelf)" >&2; exit 1; }
dest=.deps/xgboost
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download libxgboost0 libxgboost-dev libdmlc0 >/dev/null)
rm -rf "$dest" && mkdir -p "$dest/include" "$dest/lib"
for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$tmp/root"; done
cp -r "$tmp/root/usr/include/xgboost" "$dest/include/"
cp -a "$tmp"/root/usr/lib/x86_64-linux-gnu/libxgboost.so* "$tmp"/root/usr/lib/x86_64-linux-gnu/libdmlc.so* "$dest/lib/"
for lib in "$dest"/lib/libxgboost.so.*; do [ -L "$lib" ] || patchelf --set-rpath '$ORIGIN' "$lib"; done
du -sh "$dest"
