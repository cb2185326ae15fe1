#include "stats/summary.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace kbv::stats {
namespace {

// NaN breaks the strict weak ordering that sort and nth_element rely on (undefined behaviour),
// so refuse it up front with a message that points at the producer.
void require_samples(std::span<const double> values, const char* who) {
  if (values.empty()) throw std::invalid_argument(std::string(who) + ": no samples");
  for (double v : values)
    if (std::isnan(v))
      throw std::invalid_argument(std::string(who) +
                                  ": NaN sample; check the timer that produced it");
}

void require_q(double q) {
  if (!(q >= 0.0 && q <= 1.0))  // also rejects NaN
    throw std::invalid_argument("quantile: q must lie in [0, 1]");
}

// Type 7 on already sorted data: h = (n-1)q, interpolate between x[floor(h)] and the next.
double quantile_sorted(const std::vector<double>& x, double q) {
  double h = static_cast<double>(x.size() - 1) * q;
  auto lo = static_cast<std::size_t>(std::floor(h));
  if (lo + 1 >= x.size()) return x.back();
  double t = h - static_cast<double>(lo);
  return x[lo] + t * (x[lo + 1] - x[lo]);
}

}  // namespace

double quantile(std::span<const double> values, double q) {
  require_samples(values, "quantile");
  require_q(q);
  // Partial selection, O(n): only x[lo] and the smallest element above it are needed.
  std::vector<double> x(values.begin(), values.end());
  double h = static_cast<double>(x.size() - 1) * q;
  auto lo = static_cast<std::size_t>(std::floor(h));
  std::nth_element(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(lo), x.end());
  if (lo + 1 >= x.size()) return x[lo];
  double a = x[lo];
  double b = *std::min_element(x.begin() + static_cast<std::ptrdiff_t>(lo) + 1, x.end());
  return a + (h - static_cast<double>(lo)) * (b - a);
}

Summary summarize(std::span<const double> values) {
  require_samples(values, "summarize");
  std::vector<double> x(values.begin(), values.end());
  std::sort(x.begin(), x.end());

  Summary s;
  s.n = x.size();
  s.min = x.front();
  s.max = x.back();
  s.median = quantile_sorted(x, 0.5);
  s.q1 = quantile_sorted(x, 0.25);
  s.q3 = quantile_sorted(x, 0.75);

  // Two passes: the mean first, then squared deviations, which avoids the cancellation of the
  // sum-of-squares formula when the spread is tiny relative to the mean (typical for timings).
  double sum = 0;
  for (double v : x) sum += v;
  s.mean = sum / static_cast<double>(s.n);
  if (s.n > 1) {
    double ss = 0;
    for (double v : x) ss += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(ss / static_cast<double>(s.n - 1));
  }  // one sample: stddev stays 0 rather than NaN, so reports and JSON stay finite
  return s;
}

}  // namespace kbv::stats
