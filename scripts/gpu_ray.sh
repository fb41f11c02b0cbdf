#!/usr/bin/env bash
# tessera.ray on a GPU machine, which has no package index and no Ray: Ray's
# wheel comes in two parts (scripts/carry_ray.sh writes them here) that need two
# device calls back to back, since one call carries at most 64 MiB:
#   call 1  carry [".cache/ray/part1"]                              command: bash scripts/gpu_ray.sh stash
#   call 2  carry [".cache/ray/part2", ".whl", ".deps/xgboost"]     command: bash scripts/gpu_check.sh ray
#           (or bash scripts/gpu_ray.sh alone), within 30 s of call 1's end: the warm
#           machine keeps /tmp that long, and the stash with it
#   scripts/gpu_ray.sh stash   copies the carried parts (pieces and MANIFEST) into $RAY_STASH
#   scripts/gpu_ray.sh         joins the pieces (the stash's and this call's), checks each
#                              sha256 and the whole wheel's, installs Ray and the carried
#                              dependencies into $BUILD/raysite, builds the tessera package into
#                              $BUILD/pysite when gpu_check's python stage has not, checks that
#                              every requirement of Ray's is met, then runs the Ray tests: the
#                              compile-only ones CI runs and tests/serve/python/test_ray_gpu.py
#                              (one full-mode actor per GPU, a killed actor, 1 against N actors)
# Every step logs; a missing piece names the call that brings it. The scaling
# figures go to $OUT/ray_scale.json and the last line sums them up.
# Environment: BUILD_DIR (build-gpu, as gpu_check.sh), OUT (runs/gpu_check), RAY_STASH
# (/tmp/tessera-ray-stash), PY (the interpreter the build found, else python3),
# RAY_TESTS (the test files; default the three Ray tests).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
SRC=.cache/ray
STASH=${RAY_STASH:-/tmp/tessera-ray-stash}
BUILD=${BUILD_DIR:-build-gpu}
case "$BUILD" in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
OUT=${OUT:-runs/gpu_check}
CALL1='call 1 (carry [".cache/ray/part1"], command: bash scripts/gpu_ray.sh stash) right before this one'
CALL2='this call, with .cache/ray/part2 in its carry'
t0=$SECONDS

log() { echo "[gpu_ray $((SECONDS - t0))s] $*"; }
fail() {
  log "FAIL: $*"
  echo "ray: FAIL: $*"
  exit 1
}
mib() { du -cb --apparent-size "$@" 2>/dev/null | awk '$2=="total"{printf "%.1f MiB", $1 / 1048576}'; }

if [ "${1:-}" = stash ]; then
  mkdir -p "$STASH"
  stashed=0
  for part in part1 part2; do
    [ -f "$SRC/$part/MANIFEST" ] || continue
    cp "$SRC/$part"/* "$STASH"/ || fail "could not copy $SRC/$part into $STASH"
    log "stashed $part ($(mib "$SRC/$part")) in $STASH"
    stashed=1
  done
  [ $stashed = 1 ] || fail "nothing to stash: carry .cache/ray/part1 in this call (scripts/carry_ray.sh writes it)"
  log "now call 2 within 30 s: carry [\".cache/ray/part2\", \".whl\", \".deps/xgboost\"], bash scripts/gpu_check.sh ray"
  exit 0
fi

# ---- the pieces: where each one is, and its sha256 ---------------------------------
manifest=""
for m in "$SRC/part2/MANIFEST" "$SRC/part1/MANIFEST" "$STASH/MANIFEST"; do [ -f "$m" ] && { manifest=$m; break; }; done
[ -n "$manifest" ] || fail "no Ray parts here nor in $STASH: carry .cache/ray/part2 in this call, after $CALL1"
log "manifest $manifest"
find_piece() {  # find_piece NAME PART: the file's path, from this call's carry or the stash
  local f
  for f in "$SRC/$2/$1" "$STASH/$1"; do [ -f "$f" ] && { echo "$f"; return 0; }; done
  return 1
}
wheel="" wheel_sum="" pieces=() deps=() missing=()
while read -r kind name sum part; do
  case "$kind" in
    wheel) wheel=$name wheel_sum=$sum; continue ;;
    piece | dep) ;;
    *) continue ;;
  esac
  if ! f=$(find_piece "$name" "$part"); then
    if [ "$part" = part1 ]; then missing+=("$name ($part: make $CALL1)"); else missing+=("$name ($part: carry it in $CALL2)"); fi
    continue
  fi
  [ "$(sha256sum "$f" | cut -d' ' -f1)" = "$sum" ] || fail "$f is damaged (sha256 differs from the manifest): carry $part again"
  if [ "$kind" = piece ]; then pieces+=("$f"); else deps+=("$f"); fi
  log "ok $kind $f"
done < "$manifest"
[ ${#missing[@]} -eq 0 ] || fail "missing: ${missing[*]}"
if [ -z "$wheel" ] || [ ${#pieces[@]} -eq 0 ]; then fail "$manifest names no wheel: run scripts/carry_ray.sh again"; fi
version=$(echo "$wheel" | cut -d- -f2)

# ---- the interpreter and the tessera package (as gpu_check.sh's python stage) ---------
PY=${PY:-$(sed -n 's/^_*Python_EXECUTABLE:[A-Z]*=//p' "$BUILD/CMakeCache.txt" 2>/dev/null | head -n 1)}
PY=${PY:-python3}
SITE="$BUILD/pysite"  # gpu_check.sh's python stage installs the package and .whl/ here
RAYSITE="$BUILD/raysite"
WHEELS="$BUILD/ray-wheels"
export PYTHONPATH="$SITE:$RAYSITE${PYTHONPATH:+:$PYTHONPATH}"
log "python $("$PY" -c 'import sys; print(sys.version.split()[0], sys.executable)')"

# ---- Ray: joined, checked, installed -------------------------------------------------
if [ -f "$RAYSITE/ray-$version.dist-info/METADATA" ] && "$PY" -c "import ray" 2>/dev/null; then
  log "Ray $version already in $RAYSITE (an earlier call on this warm machine)"
else
  rm -rf "$WHEELS" && mkdir -p "$WHEELS"
  mapfile -t sorted < <(printf '%s\n' "${pieces[@]}" | awk -F/ '{print $NF "\t" $0}' | sort | cut -f2)
  cat "${sorted[@]}" > "$WHEELS/$wheel" || fail "could not join the pieces into $WHEELS/$wheel"
  [ "$(sha256sum "$WHEELS/$wheel" | cut -d' ' -f1)" = "$wheel_sum" ] ||
    fail "the joined $wheel differs from the manifest's sha256: the two parts come from different runs of carry_ray.sh?"
  log "joined ${#sorted[@]} pieces into $wheel ($(mib "$WHEELS/$wheel")), sha256 ok"
  [ ${#deps[@]} -eq 0 ] || cp "${deps[@]}" "$WHEELS/"
  rm -rf "$RAYSITE"
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$RAYSITE" --find-links "$WHEELS" \
    "$WHEELS"/*.whl || fail "pip could not install the wheels in $WHEELS"
  log "installed into $RAYSITE: $(find "$WHEELS" -name '*.whl' -printf '%f ')"
fi

if ! "$PY" -c "import tessera._core" 2>/dev/null; then
  log "the tessera package is not in $SITE (gpu_check.sh's python stage builds it): building it"
  if compgen -G ".whl/*.whl" >/dev/null; then
    "$PY" -m pip install -q --no-index --no-deps --upgrade --target "$SITE" .whl/*.whl || fail "pip could not install .whl/*.whl"
  else
    log "no .whl/*.whl carried: the image's own packages (scikit-build-core, packaging) must do"
  fi
  CMAKE_GENERATOR=Ninja "$PY" -m pip install -q --no-build-isolation --no-index --no-deps --upgrade --target "$SITE" \
    -Cbuild-dir="$BUILD" -Ccmake.build-type=Release . || fail "the tessera package did not build (pip install .)"
fi
log "tessera $("$PY" -c 'import tessera, tessera._core as c; print(tessera.__file__, "-", c.device_count(), "GPUs")')"

# Every requirement of the carried wheels met by the carried ones or the image's (pip --no-deps checks none).
"$PY" - "$RAYSITE" <<'PY' || fail "Ray's requirements are not all met: carry the missing ones (scripts/carry_ray.sh, GPU_HAS)"
import sys
from importlib import metadata
from pathlib import Path
try:
    from packaging.requirements import Requirement
except ImportError:
    from pip._vendor.packaging.requirements import Requirement

bad = []
for info in Path(sys.argv[1]).glob("*.dist-info"):
    dist = metadata.Distribution.at(info)
    for text in dist.requires or []:
        r = Requirement(text)
        if r.marker is not None and not r.marker.evaluate({"extra": ""}):
            continue
        try:
            have = metadata.version(r.name)
        except metadata.PackageNotFoundError:
            bad.append(f"{dist.metadata['Name']} needs {r}: not installed")
            continue
        if r.specifier and not r.specifier.contains(have, prereleases=True):
            bad.append(f"{dist.metadata['Name']} needs {r}: {have} here")
print("\n".join(bad) if bad else "requirements: every one met")
sys.exit(1 if bad else 0)
PY
"$PY" -c "import ray; print('ray', ray.__version__, ray.__file__)" || fail "Ray does not import"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=index,name,uuid,pci.bus_id --format=csv,noheader

# ---- the tests -------------------------------------------------------------------------
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
rm -f "$OUT/ray_scale.json"
TESTS=${RAY_TESTS:-tests/serve/python/test_ray.py tests/serve/python/test_ray_node_loss.py tests/serve/python/test_ray_gpu.py}
log "pytest $TESTS"
# shellcheck disable=SC2086
env RAY_USAGE_STATS_ENABLED=0 PYTHONUNBUFFERED=1 TESSERA_RAY_SCALE_JSON="$OUT/ray_scale.json" \
  "$PY" -m pytest -q -rs -s $TESTS 2>&1 | tee "$BUILD/gpu_ray_pytest.log"
rc=${PIPESTATUS[0]}
log "pytest exit $rc"
summary=$(grep -E "^=* *[0-9]+ (passed|failed|skipped|errors?)" "$BUILD/gpu_ray_pytest.log" | tail -n 1 | tr -d '=' | sed 's/^ *//')
skips=$(grep -E "^SKIPPED" "$BUILD/gpu_ray_pytest.log" | sed 's/^SKIPPED \[[0-9]*\] //' | tr '\n' ';')
figures=$("$PY" - "$OUT/ray_scale.json" <<'PY' 2>/dev/null
import json, sys
f = json.load(open(sys.argv[1]))
one, every = f["one_actor"], f["all_actors"]
print(f"scaling on {f['gpus']} x {f['device']}: 1 actor {one['evals_per_min']} evals/min, "
      f"{every['actors']} actors {every['evals_per_min']} ({f['speedup']}x)")
PY
)
echo "ray: ${summary:-no pytest summary}${figures:+; $figures}${skips:+; skipped: $skips}"
exit "$rc"
