#pragma once
// Minimal ELF64 reader for two jobs: reading a candidate's exported launch
// contract from its cubin (no GPU needed), and listing a shared object's
// needed libraries and undefined symbols (the no-cuBLAS policy).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::detail {

struct ElfSymbol {
  std::string name;
  bool defined = false;
  bool function = false;
  std::string data;  // initial bytes for defined data symbols with file contents
};

struct ElfInfo {
  std::vector<ElfSymbol> symbols;          // .symtab and .dynsym
  std::vector<std::string> needed;         // DT_NEEDED entries
};

// Returns std::nullopt with `error` set when the image is not a valid ELF64.
std::optional<ElfInfo> read_elf(std::string_view image, std::string* error);

const ElfSymbol* find_symbol(const ElfInfo& info, std::string_view name);

}  // namespace tessera::detail
