#include "stats/median_ci.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

namespace kbv::stats {
namespace {

// P(B <= m) for B ~ Binomial(n, 1/2), m < n/2. The top term comes from lgamma (no overflow of
// C(n, m), no underflow of 2^-n as a factor); lower terms follow by the ratio
// pmf(j-1)/pmf(j) = j/(n-j+1) < 1, so the sum stops once a geometric bound on the rest is
// negligible: O(sqrt n) terms near the centre, O(m) in the far tail. Relative error ~1e-9 at
// n = 1e6, set by lgamma's rounding of numbers near 1e7.
double binomial_half_cdf(std::size_t n, std::size_t m) {
  const double nd = static_cast<double>(n);
  const double md = static_cast<double>(m);
  double log_top =
      std::lgamma(nd + 1) - std::lgamma(md + 1) - std::lgamma(nd - md + 1) - nd * std::log(2.0);
  double term = std::exp(log_top);
  if (term == 0.0) return 0.0;  // every lower term is smaller still
  double sum = 0;
  for (std::size_t j = m;; --j) {
    sum += term;
    if (j == 0) break;
    double r = static_cast<double>(j) / (nd - static_cast<double>(j) + 1);
    if (term * r / (1 - r) < sum * 1e-17) break;
    term *= r;
  }
  return sum;
}

// The 1-based rank k of the lower order statistic; the upper one is n - k + 1. Coverage of
// [x_(k), x_(n-k+1)] is 1 - 2 F(k-1), so the narrowest symmetric pair takes the largest k with
// F(k-1) <= (1 - confidence) / 2. F is monotone: binary search over m = k - 1.
std::size_t lower_rank(std::size_t n, double confidence) {
  // Exact ties (e.g. n = 10 at 1 - 22/1024) should count as meeting the confidence; the slack
  // only needs to exceed binomial_half_cdf's rounding.
  const double tail = (1 - confidence) / 2 * (1 + 1e-9);
  std::size_t lo = 0, hi = (n - 1) / 2;          // k <= n - k + 1 keeps low <= high
  if (binomial_half_cdf(n, 0) > tail) return 1;  // n too small: [min, max]
  while (lo < hi) {                              // invariant: F(lo) <= tail
    std::size_t mid = lo + (hi - lo + 1) / 2;
    if (binomial_half_cdf(n, mid) <= tail) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo + 1;
}

}  // namespace

Interval median_ci(std::span<const double> values, double confidence) {
  if (values.empty()) throw std::invalid_argument("median_ci: no samples");
  if (!(confidence > 0 && confidence < 1))
    throw std::invalid_argument("median_ci: confidence must lie in (0, 1), e.g. 0.95");
  for (double v : values)
    if (std::isnan(v))
      throw std::invalid_argument("median_ci: NaN sample; check the timer that produced it");

  const std::size_t n = values.size();
  const std::size_t k = lower_rank(n, confidence);
  const std::size_t i_low = k - 1, i_high = n - k;  // 0-based

  // Two selections instead of a sort: this runs every round of the stopping rule.
  std::vector<double> x(values.begin(), values.end());
  auto at = [&](std::size_t i) { return x.begin() + static_cast<std::ptrdiff_t>(i); };
  std::nth_element(x.begin(), at(i_low), x.end());
  Interval ci{x[i_low], x[i_low]};
  if (i_high > i_low) {
    std::nth_element(at(i_low + 1), at(i_high), x.end());
    ci.high = x[i_high];
  }
  return ci;
}

double relative_half_width(const Interval& ci, double median) {
  if (median == 0) return std::numeric_limits<double>::infinity();
  return (ci.high - ci.low) / 2 / std::abs(median);
}

}  // namespace kbv::stats
