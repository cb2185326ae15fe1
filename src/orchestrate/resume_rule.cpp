#include "orchestrate/resume_rule.hpp"

#include <fmt/format.h>

namespace kbv {

ResumeChoice resume_choice(const std::optional<StoredVerdictSummary>& stored, const VerdictLimits& limits,
                           const ResumeWants& wants) {
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
  if (!wants.hidden_tests_sha256.empty() && stored->hidden_tests_sha256 != wants.hidden_tests_sha256)
    return {true, stored->hidden_tests_sha256.empty() ? "stored without the hidden tests" : "stored with another hidden-test file"};
  if (wants.torch_compile && stored->timed && !stored->torch_compile_timed)
    return {true, "stored without the torch_compile baseline"};
  return {false, "stored " + stored->outcome};
}

}  // namespace kbv
