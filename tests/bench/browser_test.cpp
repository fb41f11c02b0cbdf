// The report as a browser draws it: headless Chromium (Debian's `chromium`,
// installed by scripts/setup.sh) loads report.html from a synthetic run and
// its DOM must hold every chart laid out with a size, the bucket table's
// rows and the heat-map cells; a screenshot is left in the build folder
// (bench-report/report.png) for people to look at. Skips when chromium is absent.
// With TESSERA_REPORT_RUN set to a bench suite run folder (one measured on a
// GPU), a second test draws that run's report the same way and leaves
// report.png next to it (TESSERA_REPORT_AGAINST: another tool's CSV).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <regex>

#include <fmt/format.h>

#include "bench/report.hpp"
#include "bench/run.hpp"
#include "core/fs.hpp"
#include "tests/bench/synthetic.hpp"
#include "tests/testing.hpp"

namespace tessera::bench {
namespace {

namespace fs = std::filesystem;

constexpr int kWindowWidth = 1400, kWindowHeight = 5200;  // px, the screenshot

std::string chromium() {
  if (const char* c = std::getenv("TESSERA_CHROMIUM"); c && *c) return c;
  for (const char* candidate : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (fs::exists(candidate)) return candidate;
  return {};
}

int attribute(const std::string& dom, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(dom, m, std::regex(name + "=\"(\\d+)\""))) return -1;
  return std::stoi(m[1].str());
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = text.find(needle); p != std::string::npos; p = text.find(needle, p + needle.size())) ++n;
  return n;
}

const std::string kFlags = "--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run";

// Loads the page in Chromium; checks what every report must show once laid
// out and leaves a screenshot in `png`. Returns the DOM.
std::string draw(const std::string& browser, const fs::path& html_file, const fs::path& png) {
  const std::string url = "file://" + fs::absolute(html_file).string();
  const auto dumped = tessera::testing::run_command("timeout 180 " + browser + " " + kFlags + " --dump-dom '" + url +
                                                    "' 2>/dev/null");
  EXPECT_EQ(dumped.code, 0) << "chromium --dump-dom failed";
  const std::string& dom = dumped.out;
  const std::string html = read_file(html_file);
  EXPECT_EQ(attribute(dom, "data-charts-drawn"), int(count(html, "<svg "))) << "every chart laid out with a non-zero size";
  EXPECT_EQ(attribute(dom, "data-bucket-rows"), 6);  // two header rows, three buckets, all
  EXPECT_EQ(count(dom, "class=\"cell\""), count(html, "class=\"cell\""));
  fs::remove(png);
  (void)tessera::testing::run_command(fmt::format("timeout 180 {} {} --window-size={},{} --screenshot='{}' '{}' 2>/dev/null",
                                                browser, kFlags, kWindowWidth, kWindowHeight, png.string(), url));
  EXPECT_TRUE(fs::exists(png)) << "no screenshot";
  if (fs::exists(png)) {
    EXPECT_GT(fs::file_size(png), 100u * 1024u) << "a screenshot of a page with plots is not this small";
    std::printf("report screenshot: %s\n", png.c_str());
  }
  return dom;
}

TEST(BenchReportBrowser, ChromiumDrawsThePlotsAndTables) {
  const std::string browser = chromium();
  if (browser.empty()) GTEST_SKIP() << "chromium is not installed (scripts/setup.sh installs Debian's chromium)";
  const fs::path dir = fs::path(TESSERA_BINARY).parent_path().parent_path() / "bench-report";
  fs::remove_all(dir);
  const bench::Run run = testing::write_synthetic_run(dir);
  std::string csv = "mnk,cuBLASLt-auto-tuning-max,cuBLAS-max\n";
  for (std::size_t i = 0; i < run.config.tasks.size(); i += 2) {
    const auto& t = run.config.tasks[i];
    csv += fmt::format("{}_{}_{},{:.3f},{:.3f}\n", t.m, t.n, t.k, 1.0 + 0.3 * std::sin(double(i)), 1.1);
  }
  atomic_write_file(dir / "other.csv", csv);
  ReportOptions o;
  o.against = dir / "other.csv";
  const auto files = write_report(run, o);
  EXPECT_GE(count(read_file(files.html), "<svg "), 14u);  // 10 heat maps, a legend, three scatter plots
  const std::string dom = draw(browser, files.html, dir / "report.png");
  EXPECT_GT(count(dom, "class=\"cell\""), 700u);
}

// A sweep measured on a GPU, drawn as its users see it; the page must not
// put any figure above the peak.
TEST(BenchReportBrowser, DrawsARealSweepWhenGiven) {
  const char* given = std::getenv("TESSERA_REPORT_RUN");
  if (!given || !*given) GTEST_SKIP() << "TESSERA_REPORT_RUN is not set (a bench suite run folder to draw)";
  const std::string browser = chromium();
  if (browser.empty()) GTEST_SKIP() << "chromium is not installed (scripts/setup.sh installs Debian's chromium)";
  const fs::path dir = given;
  ReportOptions o;
  if (const char* a = std::getenv("TESSERA_REPORT_AGAINST"); a && *a) o.against = a;
  const auto files = write_report(load_run(dir), o);
  EXPECT_NE(read_file(files.html).find("No figure is above the peak"), std::string::npos);
  const std::string dom = draw(browser, files.html, dir / "report.png");
  EXPECT_GT(count(dom, "class=\"cell\""), 0u);
}

}  // namespace
}  // namespace tessera::bench
