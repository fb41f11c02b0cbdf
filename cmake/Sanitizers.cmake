# Instrumented builds (scripts/test_sanitizers.sh, scripts/fuzz.sh). Host C++
# only: .cu files stay uninstrumented (nvcc's host compiler is left alone).
#   -DTESSERA_SANITIZE=ON  AddressSanitizer + UndefinedBehaviorSanitizer
#   -DTESSERA_FUZZ=ON      clang's coverage hooks everywhere, libFuzzer
#                          binaries for tests/fuzz (needs clang)
option(TESSERA_SANITIZE "Build host C++ with -fsanitize=address,undefined" OFF)
option(TESSERA_FUZZ "Build the libFuzzer targets in tests/fuzz (clang)" OFF)

if(TESSERA_SANITIZE)
  # Any UB report fails the run; frame pointers keep the reports' stacks whole.
  set(TESSERA_SANITIZE_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:${TESSERA_SANITIZE_FLAGS}>")
  add_link_options(-fsanitize=address,undefined)
endif()

if(TESSERA_SANITIZE OR TESSERA_FUZZ)
  # Debian's gcc links --as-needed by default, clang does not: without it the
  # driver stub on the CUDA link line (libcuda.so) would become a dependency
  # that no machine without a GPU driver can load.
  add_link_options(-Wl,--as-needed)
endif()

if(TESSERA_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "TESSERA_FUZZ needs clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++")
  endif()
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link>")
endif()
