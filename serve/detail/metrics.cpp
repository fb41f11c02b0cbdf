#include "serve/detail/metrics.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace tessera::serve::detail {

namespace {
std::string number(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  return fmt::format("{}", v);
}
std::string braces(const std::string& labels) { return labels.empty() ? "" : "{" + labels + "}"; }
}  // namespace

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  const auto i = std::size_t(std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin());
  std::lock_guard g(mu_);
  ++counts_[i];
  sum_ += value;
  ++total_;
}

long long Histogram::count() const {
  std::lock_guard g(mu_);
  return total_;
}

void Histogram::render(std::string& out, const std::string& name, const std::string& labels) const {
  std::lock_guard g(mu_);
  const std::string sep = labels.empty() ? "" : labels + ",";
  long long cumulative = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i];
    const std::string le = i < bounds_.size() ? number(bounds_[i]) : "+Inf";
    sample(out, name + "_bucket", sep + "le=\"" + le + "\"", double(cumulative));
  }
  sample(out, name + "_sum", labels, sum_);
  sample(out, name + "_count", labels, double(total_));
}

void LabelledCounter::add(const std::string& labels, double n) {
  std::lock_guard g(mu_);
  values_[labels] += n;
}

double LabelledCounter::get(const std::string& labels) const {
  std::lock_guard g(mu_);
  auto it = values_.find(labels);
  return it == values_.end() ? 0 : it->second;
}

double LabelledCounter::total() const {
  std::lock_guard g(mu_);
  double t = 0;
  for (const auto& [k, v] : values_) t += v;
  return t;
}

void LabelledCounter::render(std::string& out, const std::string& name) const {
  std::lock_guard g(mu_);
  for (const auto& [k, v] : values_) sample(out, name, k, v);
}

std::string label(const std::string& name, const std::string& value) {
  return name + "=\"" + escape_label(value) + "\"";
}

void describe_metric(std::string& out, const std::string& name, const std::string& type, const std::string& help) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void sample(std::string& out, const std::string& name, const std::string& labels, double value) {
  out += name + braces(labels) + " " + number(value) + "\n";
}

std::string escape_label(const std::string& value) {
  std::string s;
  for (char c : value) {
    if (c == '\\') s += "\\\\";
    else if (c == '"') s += "\\\"";
    else if (c == '\n') s += "\\n";
    else s += c;
  }
  return s;
}

}  // namespace tessera::serve::detail
