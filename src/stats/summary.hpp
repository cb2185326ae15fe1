#pragma once
// Order statistics of timing samples. All functions take raw samples in any order.
#include <cstddef>
#include <span>

namespace kbv::stats {

struct Summary {
  std::size_t n = 0;
  double median = 0, q1 = 0, q3 = 0, min = 0, max = 0, mean = 0, stddev = 0;
};

// Quantile q in [0,1] with linear interpolation between order statistics (Hyndman-Fan type 7,
// numpy's default). Throws std::invalid_argument on an empty span, a NaN sample or q outside [0,1].
double quantile(std::span<const double> values, double q);

// n, median, quartiles, extremes, mean and sample standard deviation (n-1).
// Throws std::invalid_argument on an empty span or a NaN sample; stddev is 0 for one sample.
Summary summarize(std::span<const double> values);

}  // namespace kbv::stats
