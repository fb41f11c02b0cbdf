// A libFuzzer stand-in for the ordinary build and ctest: runs a target over
// its seed corpus, then over a fixed-seed series of mutations of it (byte
// flips, insertions of the parsers' own tokens, deletions, duplications,
// splices). Deterministic, so a failure reproduces; the coverage-guided runs
// are scripts/fuzz.sh's.
//   tessera_fuzz_smoke_<target> CORPUS_DIR RUNS
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_common.hpp"

namespace {

// Tokens the parsers care about: JSON, fences, diff markers, protocol words
// ("" stands for a NUL byte, the separator of multi-part inputs).
const char* const kTokens[] = {"{", "}", "[", "]", "\"", ":", ",", "\n", "\\", "\\u0000", "null", "true", "-1",
                               "1e999", "18446744073709551616", "```", "```cuda\n", "<<<<<<< SEARCH\n",
                               "=======\n", ">>>>>>> REPLACE\n", "\"event\":", "\"result\"", "\"heartbeat\"",
                               "\"step\":", "\"tasks\":", "x", "TN", "NN", ""};

std::vector<std::string> read_corpus(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    out.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return out;
}

std::string mutate(std::string s, const std::vector<std::string>& corpus, std::mt19937_64& rng) {
  auto pick = [&](std::size_t n) { return n == 0 ? std::size_t{0} : static_cast<std::size_t>(rng() % n); };
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    switch (rng() % 6) {
      case 0:
        if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1u << (rng() % 8));
        break;
      case 1: {
        const std::string t = kTokens[pick(std::size(kTokens))];
        s.insert(pick(s.size() + 1), t.empty() ? std::string(1, '\0') : t);
        break;
      }
      case 2:
        if (!s.empty()) {
          const auto at = pick(s.size());
          s.erase(at, 1 + pick(std::min<std::size_t>(16, s.size() - at)));
        }
        break;
      case 3:
        if (!s.empty()) {
          const auto at = pick(s.size());
          const auto n = 1 + pick(std::min<std::size_t>(64, s.size() - at));
          s.insert(pick(s.size() + 1), s.substr(at, n));
        }
        break;
      case 4: {
        const std::string& other = corpus[pick(corpus.size())];
        s = s.substr(0, pick(s.size() + 1)) + other.substr(pick(other.size() + 1));
        break;
      }
      default:
        s.insert(pick(s.size() + 1), 1, static_cast<char>(rng()));
    }
  }
  return s;
}

void run(const std::string& input) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR RUNS\n", argv[0]);
    return 2;
  }
  const auto corpus = read_corpus(argv[1]);
  if (corpus.empty()) {
    std::fprintf(stderr, "no seed files in %s\n", argv[1]);
    return 2;
  }
  const long runs = std::strtol(argv[2], nullptr, 10);
  for (const auto& c : corpus) run(c);
  std::mt19937_64 rng(20261123);
  std::string current = corpus.front();
  for (long i = 0; i < runs; ++i) {
    // Mostly build on the last input, sometimes restart from a seed.
    if (i % 8 == 0) current = corpus[static_cast<std::size_t>(rng() % corpus.size())];
    current = mutate(current, corpus, rng);
    if (current.size() > (64u << 10)) current.resize(64u << 10);
    run(current);
  }
  std::printf("%zu seeds and %ld mutated inputs, no failure\n", corpus.size(), runs);
  return 0;
}
