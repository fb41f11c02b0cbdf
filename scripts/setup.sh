#!/usr/bin/env bash
# Installs what tessera needs and is missing. Does nothing where everything is
# present (the H100 image has no network and needs nothing). Debian/Ubuntu.
set -euo pipefail
need=()
# Headers may sit in a multiarch folder (/usr/include/x86_64-linux-gnu/curl).
have_header() { compgen -G "/usr/include/$1" >/dev/null || compgen -G "/usr/include/*/$1" >/dev/null ||
                [ -e "/usr/local/include/$1" ]; }
have_cmake_pkg() { compgen -G "/usr/lib/*/cmake/$1*" >/dev/null || compgen -G "/usr/share/cmake/$1*" >/dev/null ||
                   compgen -G "/usr/lib/cmake/$1*" >/dev/null || compgen -G "/usr/share/cmake-*/Modules/Find$1.cmake" >/dev/null; }
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
command -v g++ >/dev/null || need+=(g++)
have_header curl/curl.h || need+=(libcurl4-openssl-dev)
have_header nlohmann/json.hpp || need+=(nlohmann-json3-dev)
have_header CLI/CLI.hpp || need+=(libcli11-dev)
have_header spdlog/spdlog.h || need+=(libspdlog-dev)
have_header fmt/format.h || need+=(libfmt-dev)
have_header boost/process.hpp || need+=(libboost-dev)
# XGBoost for the learned cost model; a machine without a package manager
# names an unpacked copy in TESSERA_XGBOOST_ROOT (scripts/gpu_check.sh).
[ -n "${TESSERA_XGBOOST_ROOT:-}" ] || have_header xgboost/c_api.h || need+=(libxgboost-dev)
have_cmake_pkg GTest || need+=(libgtest-dev)
# The sanitizer and fuzz step of scripts/test.sh: clang with libFuzzer's runtime.
if [ "${SANITIZERS:-1}" != 0 ]; then
  command -v clang++ >/dev/null || need+=(clang)
  compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null || need+=(libclang-rt-dev)
fi
install() {
  [ $# -gt 0 ] || return 0
  echo "setup: installing $*"
  local sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}
# ---- Python package (docs/env.md): an interpreter with venv and headers ------
command -v python3 >/dev/null || need+=(python3)
python3 -c "import venv, ensurepip" 2>/dev/null || need+=(python3-venv)
python3 -c "import sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()['include'], 'Python.h')))" \
  2>/dev/null || need+=(python3-dev)
# -------------------------------------------------------------------------------
install "${need[@]}"
# Optional: headless Chromium renders the bench report in its test (which
# skips without it). Where no package mirror answers (the GPU image has no
# network) setup goes on, after at most the time limit.
install_optional() {
  local sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  echo "setup: installing $* (optional)"
  timeout 120 $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive timeout 600 $sudo apt-get install -y -qq "$@" >/dev/null
}
if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null; then
  install_optional chromium || echo "setup: chromium not installed (the bench report's browser test will skip)" >&2
fi
# Boost < 1.77 needs the compiled Boost.Filesystem for Boost.Process v1. Checked
# after the headers are installed: a fresh machine learns the version only then.
bv=$(sed -n 's/^#define BOOST_VERSION \([0-9]*\).*/\1/p' /usr/include/boost/version.hpp 2>/dev/null || echo 0)
if [ "${bv:-0}" -lt 107700 ] && ! have_cmake_pkg boost_filesystem; then install libboost-filesystem-dev; fi
if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup: the CUDA toolkit (nvcc, NVRTC, cuBLAS, CUPTI) is required; install CUDA 12.4+ into /usr/local/cuda" >&2
  exit 1
fi
echo "setup: all dependencies present"
