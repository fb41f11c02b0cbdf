// Where a stacked layer of the learned cost model applies (detail/learned_layer.hpp).
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/error.hpp"
#include "tile/detail/learned_layer.hpp"

namespace tessera::tile::detail {

namespace {

std::array<float, 3> shape_of(const std::vector<float>& flat, std::size_t ncol, std::size_t row) {
  static const std::size_t m = feature_index("log2_m"), n = feature_index("log2_n"), k = feature_index("log2_k");
  const float* r = flat.data() + row * ncol;
  return {r[m], r[n], r[k]};
}

}  // namespace

Reach reach_of(const std::vector<float>& flat, std::size_t ncol, double radius) {
  Reach out;
  out.radius = radius;
  for (std::size_t i = 0; ncol > 0 && i < flat.size() / ncol; ++i) out.shapes.push_back(shape_of(flat, ncol, i));
  std::sort(out.shapes.begin(), out.shapes.end());
  out.shapes.erase(std::unique(out.shapes.begin(), out.shapes.end()), out.shapes.end());
  return out;
}

std::vector<char> within(const Reach& reach, const std::vector<float>& flat, std::size_t ncol) {
  const std::size_t n = ncol > 0 ? flat.size() / ncol : 0;
  std::vector<char> out(n, 0);
  const double r2 = reach.radius * reach.radius;
  std::array<float, 3> last{};
  char last_in = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto s = shape_of(flat, ncol, i);
    if (i > 0 && s == last) {  // a shape's configs come together: one search per shape
      out[i] = last_in;
      continue;
    }
    double best = std::numeric_limits<double>::infinity();
    for (const auto& t : reach.shapes) {
      const double d0 = s[0] - t[0], d1 = s[1] - t[1], d2 = s[2] - t[2];
      best = std::min(best, d0 * d0 + d1 * d1 + d2 * d2);
    }
    last = s, last_in = out[i] = best <= r2 + 1e-9;
  }
  return out;
}

nlohmann::json to_json(const Reach& reach) { return {{"radius", reach.radius}, {"shapes_log2_mnk", reach.shapes}}; }

Reach reach_from_json(const nlohmann::json& j) {
  try {
    Reach r;
    r.radius = j.at("radius").get<double>();
    r.shapes = j.at("shapes_log2_mnk").get<std::vector<std::array<float, 3>>>();
    if (!(r.radius > 0) || r.shapes.empty()) throw std::invalid_argument("no radius or no shape");
    return r;
  } catch (const std::exception& e) {
    fail_bad_input(fmt::format("a cost model layer's reach is malformed ({}); train the model again", e.what()));
  }
}

}  // namespace tessera::tile::detail
