#include "stats/stopping_rule.hpp"

#include <algorithm>
#include <cstddef>

#include "stats/median_ci.hpp"
#include "stats/summary.hpp"

namespace kbv::stats {

std::string_view stop_decision_name(StopDecision d) {
  switch (d) {
    case StopDecision::keep_going:
      return "running";
    case StopDecision::converged:
      return "converged";
    case StopDecision::budget:
      return "budget";
  }
  return "unknown";
}

StopDecision should_stop(const StoppingRule& rule, std::span<const double> ratios,
                         double elapsed_seconds) {
  const std::size_t n = ratios.size();
  // At least one sample even if min_rounds <= 0: median_ci needs data.
  const auto min_rounds = static_cast<std::size_t>(std::max(rule.min_rounds, 1));

  // Converged is checked first: when the last round both meets the target and crosses the
  // budget, the measurement is trustworthy, and reporting "budget" would flag it as noisy.
  if (n >= min_rounds && elapsed_seconds >= rule.min_seconds) {
    double median = quantile(ratios, 0.5);
    if (relative_half_width(median_ci(ratios), median) <= rule.target_rel_half_width)
      return StopDecision::converged;
  }
  if (elapsed_seconds >= rule.budget_seconds ||
      n >= static_cast<std::size_t>(std::max(rule.max_rounds, 0)))
    return StopDecision::budget;
  return StopDecision::keep_going;
}

}  // namespace kbv::stats
