#pragma once
// The service's counters and histograms, rendered in the Prometheus text
// exposition format (version 0.0.4). Small on purpose: labelled counters and
// fixed-bucket histograms are all /metrics needs.
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace tessera::serve::detail {

// Upper bounds of the latency buckets, in seconds: from a cached compile-only
// answer (milliseconds) to a cold full evaluation with counters (minutes).
inline const std::vector<double>& latency_buckets_s() {
  static const std::vector<double> b = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                        1,     2.5,    5,     10,   30,    60,   120,  300};
  return b;
}

class Histogram {
public:
  explicit Histogram(std::vector<double> bounds = latency_buckets_s());
  void observe(double value);
  // Appends name_bucket / name_sum / name_count lines with `labels` (e.g. stage="queue").
  void render(std::string& out, const std::string& name, const std::string& labels) const;
  long long count() const;

private:
  std::vector<double> bounds_;
  mutable std::mutex mu_;
  std::vector<long long> counts_;  // one per bound, plus +Inf
  double sum_ = 0;
  long long total_ = 0;
};

// A counter family keyed by its label set, written as it appears between the
// braces: status="ok" or endpoint="evaluate",code="200".
class LabelledCounter {
public:
  void add(const std::string& labels, double n = 1);
  double get(const std::string& labels) const;
  double total() const;
  void render(std::string& out, const std::string& name) const;

private:
  mutable std::mutex mu_;
  std::map<std::string, double> values_;
};

// label="value", the value escaped.
std::string label(const std::string& name, const std::string& value);

// "# HELP" and "# TYPE" lines.
void describe_metric(std::string& out, const std::string& name, const std::string& type, const std::string& help);
// One sample line: name{labels} value.
void sample(std::string& out, const std::string& name, const std::string& labels, double value);
// A label value with \, " and newlines escaped.
std::string escape_label(const std::string& value);

}  // namespace tessera::serve::detail
