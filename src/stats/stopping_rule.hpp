#pragma once
// When to stop sampling: after a minimum of rounds and time, once the 95% CI of the median
// paired speedup is within +-target of the median; or when the time budget runs out.
#include <span>
#include <string_view>

namespace kbv::stats {

struct StoppingRule {
  int min_rounds = 20;                 // never decide on fewer paired samples
  double min_seconds = 0.1;            // nor on less measuring time
  double budget_seconds = 10.0;        // give up (and say so) past this
  double target_rel_half_width = 0.01; // +-1% of the median
  int max_rounds = 100000;
};

enum class StopDecision { keep_going, converged, budget };
std::string_view stop_decision_name(StopDecision d);  // "running", "converged", "budget"

// `ratios` are the per-round paired speedups (baseline_ms / candidate_ms) collected so far.
// Converged needs every ratio series to meet the target; pass the one that matters.
// Converged wins when the same round also reaches the budget or max_rounds.
StopDecision should_stop(const StoppingRule& rule, std::span<const double> ratios, double elapsed_seconds);

}  // namespace kbv::stats
