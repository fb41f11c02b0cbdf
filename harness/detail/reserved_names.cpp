// Cheat 10 of docs/design.md §6 (interfering with the timer). The timer tells its
// own kernels (the L2 flush, the clock probe, and every `tessera_harness_*`
// kernel around a timed call) from the measured work by the names CUPTI
// reports, so a candidate kernel that took one of those names would have its
// time left out of every sample. Such a candidate is
// rejected: the name is looked for in the source, in the compiler's list of
// entry functions, and in the built module's symbol table, so a name pasted
// together by the preprocessor is still caught.
#include <regex>

#include <fmt/format.h>

#include "harness/detail/compile_steps.hpp"
#include "core/elf.hpp"

namespace tessera::detail {

std::string reserved_name_policy(const std::string& source, const std::string& ptxas_log,
                                 const std::string& binary_image) {
  std::string elf_error;
  const auto elf = binary_image.empty() ? std::nullopt : read_elf(binary_image, &elf_error);
  const auto why = [](const char* where, const std::string& n) {
    return fmt::format("{} the name {}, reserved for the harness's timer kernels", where, n);
  };
  for (const char* name : kHarnessKernelNames) {
    const std::string n(name);
    if (std::regex_search(source, std::regex("\\b" + n + "\\b"))) return why("uses", n);
    if (ptxas_log.find("entry function '" + n + "'") != std::string::npos) return why("compiles a kernel with", n);
    if (elf && find_symbol(*elf, n)) return why("defines a symbol with", n);
  }
  const std::string prefix(kHarnessKernelPrefix);
  std::smatch m;
  if (std::regex_search(source, m, std::regex("\\b" + prefix + "\\w*"))) return why("uses", m.str());
  if (auto at = ptxas_log.find("entry function '" + prefix); at != std::string::npos)
    return why("compiles a kernel with", ptxas_log.substr(at + 16, ptxas_log.find('\'', at + 16) - at - 16));
  if (elf)
    for (const auto& sym : elf->symbols)
      if (sym.defined && sym.name.find(prefix) != std::string::npos) return why("defines a symbol with", sym.name);
  return {};
}

}  // namespace tessera::detail
