#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, runs every test.
# GPU tests skip (with the reason) where there is no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each block prints its time: CI's limit is 90 minutes, and the sanitizer
# blocks below join the default run only where the figures say they fit.
scripts/setup.sh
echo "test.sh: setup took $SECONDS s"
build_t0=$SECONDS
scripts/build.sh
echo "test.sh: build took $((SECONDS - build_t0)) s"
BUILD=${BUILD_DIR:-build}
export TESSERA_CACHE_DIR=${TESSERA_CACHE_DIR:-$PWD/$BUILD/test-cache}
gpu=$("$BUILD/bin/tessera" doctor 2>/dev/null | sed -n 's/^GPU  *//p' || true)
echo "GPU: ${gpu:-unknown}"
case "$gpu" in none*) echo "GPU tests will be skipped: ${gpu#none }";; esac
ctest_t0=$SECONDS
ctest --test-dir "$BUILD" --output-on-failure --timeout 900 -j "${TEST_JOBS:-2}"
echo "test.sh: ctest took $((SECONDS - ctest_t0)) s"

# ---- Python package (docs/env.md) ---------------------------------------------
# Built into a virtual environment inside the repository ($VENV_DIR, default
# .venv) by pip from the build directory above (only the extension module and
# nanobind are new there), then its tests. Keep one virtual environment per
# build directory: scikit-build-core starts the CMake cache afresh when it runs
# from another installation. PIP_NO_INDEX=1 with PIP_FIND_LINKS=.whl installs
# the build and test requirements from carried wheels where there is no index.
VENV=${VENV_DIR:-.venv}
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -c "import scikit_build_core, nanobind, gymnasium, pytest" 2>/dev/null ||
  "$VENV/bin/python" -m pip install -q "scikit-build-core>=0.10" "nanobind>=2.0" "gymnasium>=1.0" pytest
CMAKE_GENERATOR=Ninja "$VENV/bin/python" -m pip install -q --no-build-isolation --no-deps \
  -Cbuild-dir="$BUILD" -Ccmake.build-type="${BUILD_TYPE:-Release}" .
"$VENV/bin/python" -m pytest -q tests/python

# ---- tessera serve (docs/serve.md): client, Ray and load tests ------------------
# In the Python package's virtual environment (the block above). httpx for
# tessera.client; Ray only here, for its local-cluster test (a large wheel:
# about a minute to install, once per virtual environment; where it cannot be
# installed, as on a machine without a package index, that test skips). Then
# the load test: 32 clients, 5,000 requests, compile-only, on loopback.
serve_t0=$SECONDS
VENV=${VENV_DIR:-.venv}
"$VENV/bin/python" -c "import httpx" 2>/dev/null || "$VENV/bin/python" -m pip install -q httpx ||
  echo "serve: httpx could not be installed (no package index? carry its wheels in .whl/)"
"$VENV/bin/python" -c "import ray" 2>/dev/null || "$VENV/bin/python" -m pip install -q ray ||
  echo "serve: Ray could not be installed here; its test skips"
echo "serve: Python dependencies ready in $((SECONDS - serve_t0)) s"
if "$VENV/bin/python" -c "import httpx" 2>/dev/null; then
  "$VENV/bin/python" -m pytest -q tests/serve/python
  "$VENV/bin/python" scripts/load_test.py --clients 32 --requests 5000
  echo "serve: client, Ray and load tests took $((SECONDS - serve_t0)) s"
else
  echo "serve: SKIPPED the client, Ray and load tests: no httpx in $VENV"
fi

# The CPU tests again with AddressSanitizer + UndefinedBehaviorSanitizer, then a
# bounded coverage-guided run of every fuzz target (docs/harness.md, "Hostile
# input"). Opt-in (SANITIZERS=1): a second, clang build of the tree from a clean
# clone may not fit CI's 90 minutes next to the plain one (the times printed
# above say how much room there is). The fuzz targets' fixed-seed smoke runs
# are in the ctest above either way.
if [ "${SANITIZERS:-0}" = 1 ]; then
  scripts/test_sanitizers.sh
  scripts/fuzz.sh
fi
echo "test.sh: everything took $SECONDS s"
