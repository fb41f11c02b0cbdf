#include "tests/fuzz/fuzz_common.hpp"

#include <cstdlib>
#include <fstream>
#include <system_error>

namespace tessera::fuzz {

namespace {
struct Scratch {
  std::filesystem::path dir;
  Scratch() {
    std::string templ = (std::filesystem::temp_directory_path() / "tessera-fuzz-XXXXXX").string();
    if (!::mkdtemp(templ.data())) std::abort();
    dir = templ;
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};
}  // namespace

const std::filesystem::path& scratch_dir() {
  static Scratch s;
  return s.dir;
}

void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace tessera::fuzz
