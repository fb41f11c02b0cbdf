// Hidden subcommands: the sandbox worker, the TU runner and the compile child
// (harness/child_roles.hpp). The harness starts them; users never need to.
#include "cli/command.hpp"
#include "harness/child_roles.hpp"

namespace {

void setup(CLI::App& root) {
  tessera::add_child_roles(root, [](int code) { tessera::cli::set_exit_code(code); });
}

}  // namespace

TESSERA_COMMAND(900, setup);
