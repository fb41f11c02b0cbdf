# All third-party code comes from system packages (scripts/setup.sh installs
# them on Debian; the H100 image ships them). Nothing is vendored.
find_package(CUDAToolkit 12.0 REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(CURL REQUIRED)
find_package(Threads REQUIRED)
find_package(GTest REQUIRED)

# Boost.Process v1. On Boost >= 1.77 it is header-only once told to use
# std::filesystem; on 1.74 (Debian 12) it needs the compiled Boost.Filesystem.
# CONFIG mode because cmake 4 removed FindBoost.
find_package(Boost 1.74 CONFIG REQUIRED)
add_library(tessera_boost_process INTERFACE)
if(Boost_VERSION VERSION_GREATER_EQUAL 1.77)
  target_compile_definitions(tessera_boost_process INTERFACE BOOST_PROCESS_USE_STD_FS)
  target_link_libraries(tessera_boost_process INTERFACE Boost::headers)
else()
  find_package(Boost 1.74 CONFIG REQUIRED COMPONENTS filesystem)
  target_link_libraries(tessera_boost_process INTERFACE Boost::headers Boost::filesystem)
endif()
target_link_libraries(tessera_boost_process INTERFACE Threads::Threads)

# The driver library (libcuda.so.1) exists only where a GPU driver is installed.
# Nothing links it: driver entry points are fetched through the runtime
# (cudaGetDriverEntryPointByVersion), so every binary also starts on CI.
set(TESSERA_CUDA_INCLUDE_DIR "${CUDAToolkit_INCLUDE_DIRS}")
list(GET TESSERA_CUDA_INCLUDE_DIR 0 TESSERA_CUDA_INCLUDE_DIR)
find_program(TESSERA_NVCC nvcc HINTS ${CUDAToolkit_BIN_DIR} REQUIRED)

# XGBoost's C API, for the learned cost model (tile/learned_model.hpp). From
# Debian's libxgboost-dev here and in CI; on a machine without a package
# manager (the GPU machines) a copy unpacked from those packages, named by
# TESSERA_XGBOOST_ROOT (include/ and lib/ beneath it). Optional: without it the
# tile compiler ranks with the analytical model alone and says so.
set(TESSERA_XGBOOST_ROOT "$ENV{TESSERA_XGBOOST_ROOT}" CACHE PATH "a folder with include/xgboost/c_api.h and lib/libxgboost.so")
find_path(TESSERA_XGBOOST_INCLUDE xgboost/c_api.h HINTS ${TESSERA_XGBOOST_ROOT}/include)
find_library(TESSERA_XGBOOST_LIB xgboost HINTS ${TESSERA_XGBOOST_ROOT}/lib)
if(TESSERA_XGBOOST_INCLUDE AND TESSERA_XGBOOST_LIB)
  add_library(tessera_xgboost INTERFACE)
  target_include_directories(tessera_xgboost SYSTEM INTERFACE ${TESSERA_XGBOOST_INCLUDE})
  target_link_libraries(tessera_xgboost INTERFACE ${TESSERA_XGBOOST_LIB})
  target_compile_definitions(tessera_xgboost INTERFACE TESSERA_HAVE_XGBOOST=1)
  message(STATUS "XGBoost: ${TESSERA_XGBOOST_LIB} (the learned cost model is built)")
else()
  message(STATUS "XGBoost: not found; the learned cost model is left out (install libxgboost-dev)")
endif()
