// Cheat 10 of docs/design.md §6 (interfering with the timer). The timer tells its
// own kernels (the L2 flush and the clock probe) from the measured work by
// the names CUPTI reports, so a candidate kernel that took one of those names
// would have its time left out of every sample. Such a candidate is
// rejected: the name is looked for in the source, in the compiler's list of
// entry functions, and in the built module's symbol table, so a name pasted
// together by the preprocessor is still caught.
#include <regex>

#include <fmt/format.h>

#include "harness/detail/compile_steps.hpp"
#include "harness/detail/elf.hpp"

namespace tessera::detail {

std::string reserved_name_policy(const std::string& source, const std::string& ptxas_log,
                                 const std::string& binary_image) {
  std::string elf_error;
  const auto elf = binary_image.empty() ? std::nullopt : read_elf(binary_image, &elf_error);
  for (const char* name : kHarnessKernelNames) {
    const std::string n(name);
    const auto why = [&](const char* where) {
      return fmt::format("{} the name {}, reserved for the harness's timer kernels", where, n);
    };
    if (std::regex_search(source, std::regex("\\b" + n + "\\b"))) return why("uses");
    if (ptxas_log.find("entry function '" + n + "'") != std::string::npos) return why("compiles a kernel with");
    if (elf && find_symbol(*elf, n)) return why("defines a symbol with");
  }
  return {};
}

}  // namespace tessera::detail
