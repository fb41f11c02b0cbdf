#pragma once
// Minimal ELF64 reader for three jobs: reading a candidate's exported launch
// contract from its cubin (no GPU needed), listing a shared object's needed
// libraries and undefined symbols (the no-cuBLAS policy), and taking the
// device code out of a translation unit's shared object (the worker loads it
// itself). Part of tessera_core: the worker needs it too.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

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

// The bytes of the section called `name` (e.g. ".nv_fatbin", the device code
// nvcc embeds in a shared object); nullopt when absent or the image is bad.
std::optional<std::string> read_section(std::string_view image, std::string_view name);

}  // namespace tessera
