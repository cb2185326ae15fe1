#include "stats/compare.hpp"

namespace kbv::stats {

std::string_view compare_speedup(const Interval& ci, double band) {
  // SAME first: a CI of [1.002, 1.008] is above 1 but too close to matter.
  if (ci.low >= 1 - band && ci.high <= 1 + band) return "SAME";
  if (ci.low > 1) return "FASTER";
  if (ci.high < 1) return "SLOWER";
  return "UNSURE";  // also NaN bounds: every comparison above is false
}

}  // namespace kbv::stats
