#include "orchestrate/resume_rule.hpp"

#include <fmt/format.h>

namespace kbv {

ResumeChoice resume_choice(const std::optional<StoredVerdictSummary>& stored, const VerdictLimits& limits) {
  if (!stored) return {true, "not stored"};
  auto outcome = outcome_from_name(stored->outcome);
  if (!outcome) return {true, fmt::format("stored outcome '{}' is unknown to this kbv", stored->outcome)};
  if (*outcome == Outcome::internal_error) return {true, "stored internal_error (kbv's fault, not the candidate's)"};
  if (*outcome == Outcome::timeout && stored->limits) {
    bool build = stored->stage == "build";
    double then = build ? stored->limits->compile_timeout_seconds : stored->limits->run_timeout_seconds;
    double now = build ? limits.compile_timeout_seconds : limits.run_timeout_seconds;
    if (then > 0 && now > then)
      return {true, fmt::format("stored timeout under --{}-timeout {:g} s; now {:g} s", build ? "compile" : "run", then, now)};
  }
  return {false, "stored " + stored->outcome};
}

}  // namespace kbv
