#include "bench/buckets.hpp"

#include <set>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/fs.hpp"

namespace tessera::bench {

std::vector<Bucket> default_buckets() {
  return {{"small", kSmallMaxFlops}, {"medium", kMediumMaxFlops}, {"large", std::nullopt}};
}

std::vector<Bucket> parse_buckets(const nlohmann::json& j, const std::string& where) {
  if (!j.is_array() || j.empty()) fail_bad_input(where + ": \"buckets\" must be a non-empty array");
  std::vector<Bucket> out;
  std::set<std::string> names;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const auto& e = j[i];
    const std::string at = fmt::format("{}: bucket {}", where, i);
    if (!e.is_object() || !e.contains("name") || !e.at("name").is_string() || e.at("name").get<std::string>().empty())
      fail_bad_input(at + ": needs a \"name\" string");
    Bucket b{e.at("name").get<std::string>(), std::nullopt};
    if (!names.insert(b.name).second) fail_bad_input(fmt::format("{}: the name '{}' is used twice", at, b.name));
    if (e.contains("max_flops") && !e.at("max_flops").is_null()) {
      if (!e.at("max_flops").is_number() || e.at("max_flops").get<double>() <= 0)
        fail_bad_input(at + ": \"max_flops\" must be a positive number or null");
      b.max_flops = e.at("max_flops").get<double>();
    }
    if (!out.empty() && !out.back().max_flops)
      fail_bad_input(fmt::format("{}: only the last bucket may have no max_flops", at));
    if (!out.empty() && b.max_flops && *b.max_flops <= *out.back().max_flops)
      fail_bad_input(at + ": max_flops must increase from one bucket to the next");
    out.push_back(std::move(b));
  }
  if (out.back().max_flops)
    fail_bad_input(where + ": the last bucket must have no max_flops (null), so that every task has a bucket");
  return out;
}

std::vector<Bucket> load_buckets(const std::filesystem::path& tasks_file) {
  const auto j = nlohmann::json::parse(read_file(tasks_file), nullptr, false);
  if (j.is_discarded()) fail_bad_input(tasks_file.string() + ": not valid JSON");
  if (!j.is_object() || !j.contains("buckets")) return default_buckets();
  return parse_buckets(j.at("buckets"), tasks_file.string());
}

const std::string& bucket_of(const Task& task, const std::vector<Bucket>& buckets) {
  TESSERA_REQUIRE(!buckets.empty(), "no buckets");
  for (const auto& b : buckets)
    if (!b.max_flops || task.flops() <= *b.max_flops) return b.name;
  return buckets.back().name;
}

nlohmann::json to_json(const std::vector<Bucket>& buckets) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& b : buckets)
    out.push_back({{"name", b.name}, {"max_flops", b.max_flops ? nlohmann::json(*b.max_flops) : nlohmann::json()}});
  return out;
}

}  // namespace tessera::bench
