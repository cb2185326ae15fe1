#pragma once
// A verdict word for a speedup and its CI (as nvbench's compare does), not a bare ratio.
#include <string_view>

#include "stats/median_ci.hpp"

namespace kbv::stats {

// SAME when the whole CI lies within [1 - band, 1 + band]; otherwise FASTER when ci.low > 1,
// SLOWER when ci.high < 1, else UNSURE.
std::string_view compare_speedup(const Interval& ci, double band = 0.01);

}  // namespace kbv::stats
