#include "bench/model_eval_chart.hpp"

#include <algorithm>
#include <functional>

#include "core/error.hpp"
#include "search/svg.hpp"

namespace tessera::bench {

namespace {

// One model's shapes as a step line over the share of its shapes (0-100%):
// values ordered worst first, the last held to 100%.
search::svg::Series quantiles(const std::string& name, std::vector<double> values,
                              const std::function<bool(double, double)>& worse_first) {
  std::sort(values.begin(), values.end(), worse_first);
  search::svg::Series s;
  s.name = name;
  const double n = double(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    s.x.push_back(100.0 * double(i) / n);
    s.y.push_back(values[i]);
  }
  s.x.push_back(100.0);
  s.y.push_back(values.back());
  return s;
}

}  // namespace

std::string model_eval_chart(const std::vector<ChartedJudgement>& models) {
  std::vector<search::svg::Series> rho, first;
  for (const auto& m : models) {
    if (!m.judgement || m.judgement->shapes.empty()) continue;
    std::vector<double> r, f;
    for (const auto& s : m.judgement->shapes) {
      r.push_back(s.spearman);
      f.push_back(100 * (s.first_pick_ratio - 1));
    }
    rho.push_back(quantiles(m.name, std::move(r), std::less<double>{}));
    first.push_back(quantiles(m.name, std::move(f), std::greater<double>{}));
  }
  if (rho.empty()) fail_bad_input("--plot: no model judged a shape, nothing to draw");
  return search::svg::stack(
      {search::svg::line_chart("Spearman's rho per shape, predicted against measured time (worst first)",
                               "shapes (%)", "rho", rho, 0.9),
       search::svg::line_chart("The first pick's time over the best measured (worst first)", "shapes (%)",
                               "% over the best", first, 100 * (kNearBest - 1))});
}

}  // namespace tessera::bench
