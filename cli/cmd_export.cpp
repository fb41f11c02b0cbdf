// tessera export RUN --format sft|dpo|rl|report: post-training data from a search run.
#include <string>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "search/export.hpp"
#include "search/report.hpp"

namespace {

struct Args {
  std::string run;
  std::string format;
  std::string out;
};

void run(const Args& a) {
  if (a.format == "report") {
    const auto path = tessera::search::write_report(tessera::search::load_run(a.run));
    fmt::print("report: {}\n", path.string());
    return;
  }
  const auto res = tessera::search::export_run(a.run, a.format, a.out);
  fmt::print("{}: {} lines from {} trajectory records -> {}\n", a.format, res.lines, res.records, res.path.string());
  if (res.lines == 0 && !res.empty_reason.empty()) fmt::print("{}: no lines because {}\n", a.format, res.empty_reason);
}

void setup(CLI::App& root) {
  static Args a;
  auto* cmd = root.add_subcommand("export", "Export a search run as SFT chats, DPO pairs or RL reward records (JSONL)");
  cmd->add_option("run", a.run, "run directory (runs/<id>)")->required();
  cmd->add_option("--format", a.format, "sft, dpo, rl (or report: regenerate report.md)")->required();
  cmd->add_option("--out", a.out, "output file (default runs/<id>/export/<format>.jsonl)");
  cmd->callback([] { run(a); });
}

TESSERA_COMMAND(80, setup);

}  // namespace
