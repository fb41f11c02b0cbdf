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
