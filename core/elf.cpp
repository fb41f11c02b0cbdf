#include "core/elf.hpp"

#include <elf.h>

#include <cstring>

namespace tessera {

namespace {

template <class T>
bool read_at(std::string_view image, std::size_t offset, T* out) {
  if (offset > image.size() || image.size() - offset < sizeof(T)) return false;
  std::memcpy(out, image.data() + offset, sizeof(T));
  return true;
}

std::string c_string_at(std::string_view image, std::size_t offset) {
  if (offset >= image.size()) return {};
  auto end = image.find('\0', offset);
  if (end == std::string_view::npos) return {};
  return std::string(image.substr(offset, end - offset));
}

}  // namespace

std::optional<ElfInfo> read_elf(std::string_view image, std::string* error) {
  auto fail = [&](const char* why) -> std::optional<ElfInfo> {
    if (error) *error = why;
    return std::nullopt;
  };
  Elf64_Ehdr eh;
  if (!read_at(image, 0, &eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return fail("not an ELF file");
  if (eh.e_ident[EI_CLASS] != ELFCLASS64) return fail("not a 64-bit ELF file");
  if (eh.e_shentsize != sizeof(Elf64_Shdr)) return fail("unexpected ELF section header size");

  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  for (std::size_t i = 0; i < sections.size(); ++i) {
    if (!read_at(image, eh.e_shoff + i * sizeof(Elf64_Shdr), &sections[i])) return fail("truncated ELF section table");
  }

  ElfInfo info;
  for (const auto& sh : sections) {
    if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) {
      if (sh.sh_link >= sections.size()) return fail("bad ELF symbol string table link");
      const auto& strtab = sections[sh.sh_link];
      std::size_t count = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
      for (std::size_t i = 0; i < count; ++i) {
        Elf64_Sym sym;
        if (!read_at(image, sh.sh_offset + i * sizeof(Elf64_Sym), &sym)) return fail("truncated ELF symbol table");
        ElfSymbol s;
        s.name = c_string_at(image, strtab.sh_offset + sym.st_name);
        if (s.name.empty()) continue;
        s.defined = sym.st_shndx != SHN_UNDEF;
        s.function = ELF64_ST_TYPE(sym.st_info) == STT_FUNC;
        if (s.defined && !s.function && sym.st_shndx < sections.size() && sym.st_size > 0) {
          const auto& home = sections[sym.st_shndx];
          // Cubins store a device global's offset within its section in st_value.
          if (home.sh_type != SHT_NOBITS && sym.st_value + sym.st_size <= home.sh_size &&
              home.sh_offset + sym.st_value + sym.st_size <= image.size()) {
            s.data = std::string(image.substr(home.sh_offset + sym.st_value, sym.st_size));
          }
        }
        info.symbols.push_back(std::move(s));
      }
    } else if (sh.sh_type == SHT_DYNAMIC) {
      if (sh.sh_link >= sections.size()) return fail("bad ELF dynamic string table link");
      const auto& strtab = sections[sh.sh_link];
      for (std::size_t off = 0; off + sizeof(Elf64_Dyn) <= sh.sh_size; off += sizeof(Elf64_Dyn)) {
        Elf64_Dyn dyn;
        if (!read_at(image, sh.sh_offset + off, &dyn)) return fail("truncated ELF dynamic section");
        if (dyn.d_tag == DT_NULL) break;
        if (dyn.d_tag == DT_NEEDED) info.needed.push_back(c_string_at(image, strtab.sh_offset + dyn.d_un.d_val));
      }
    }
  }
  return info;
}

const ElfSymbol* find_symbol(const ElfInfo& info, std::string_view name) {
  for (const auto& s : info.symbols)
    if (s.name == name && s.defined) return &s;
  return nullptr;
}

std::optional<std::string> read_section(std::string_view image, std::string_view name) {
  Elf64_Ehdr eh;
  if (!read_at(image, 0, &eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_shentsize != sizeof(Elf64_Shdr))
    return std::nullopt;
  Elf64_Shdr names;
  if (eh.e_shstrndx >= eh.e_shnum || !read_at(image, eh.e_shoff + eh.e_shstrndx * sizeof(Elf64_Shdr), &names))
    return std::nullopt;
  for (std::size_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh;
    if (!read_at(image, eh.e_shoff + i * sizeof(Elf64_Shdr), &sh)) return std::nullopt;
    if (c_string_at(image, names.sh_offset + sh.sh_name) != name) continue;
    if (sh.sh_type == SHT_NOBITS || sh.sh_offset > image.size() || image.size() - sh.sh_offset < sh.sh_size)
      return std::nullopt;
    return std::string(image.substr(sh.sh_offset, sh.sh_size));
  }
  return std::nullopt;
}

}  // namespace tessera
