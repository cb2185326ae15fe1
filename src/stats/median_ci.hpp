#pragma once
// Distribution-free confidence interval of a median from binomial order statistics: no
// bootstrap, no normality assumption, exact for any n (timing samples are skewed).
#include <cstddef>
#include <span>

namespace kbv::stats {

struct Interval {
  double low = 0;
  double high = 0;
};

// The interval [x_(l), x_(u)] of the sorted values whose coverage of the true median is at
// least `confidence`, using the exact Binomial(n, 1/2) distribution. For n too small to reach the
// confidence (n < 6 at 95%) returns [min, max]. Throws std::invalid_argument on an empty span,
// a NaN sample, or confidence outside (0, 1).
Interval median_ci(std::span<const double> values, double confidence = 0.95);

// Half-width of the interval relative to the median: (high - low) / 2 / median.
// Infinity when the median is 0.
double relative_half_width(const Interval& ci, double median);

}  // namespace kbv::stats
