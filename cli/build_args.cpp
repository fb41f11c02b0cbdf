#include "cli/build_args.hpp"

namespace tessera::cli {

void add_build_options(CLI::App* cmd, BuildOptions& b) {
  // One value per occurrence, so the options can sit before positional files.
  cmd->add_option("--include-dir", b.include_dirs,
                  "folder for nvcc's -I (translation units; repeatable), e.g. a CUTLASS include folder")
      ->allow_extra_args(false);
  cmd->add_option("--nvcc-flag", b.nvcc_flags,
                  "extra nvcc flag for translation units, written --nvcc-flag=-DNAME=1 (repeatable; allowed: -D, -U, "
                  "-O, -std, --expt-relaxed-constexpr, --use_fast_math, ... see docs/abi.md)")
      ->allow_extra_args(false);
  cmd->add_option("--torch-entry", b.torch_entry,
                  "the file is a PyTorch extension: its host function and operands, e.g. \"hgemm(a, b_col_major, c)\" "
                  "(names: a, b, b_col_major, b_nk, c, bias, m, n, k; docs/abi.md)");
}

}  // namespace tessera::cli
