#pragma once
// Whether `kbv run` evaluates a job again, given what the store holds under its key. A stored
// verdict is kept unless it is not the candidate's result after all:
//  - internal_error: kbv's own fault;
//  - an outcome this kbv cannot read;
//  - a timeout under a smaller limit than this run's, for the stage that ran out (the build
//    stage under --compile-timeout, the others under --run-timeout). A timeout stored without
//    its limits (written before kbv recorded them) is kept: nothing says the limit was smaller;
//  - one that lacks what this run adds: not checked on this run's hidden-test file
//    (--hidden-tests), or timed without the torch_compile baseline this run asks for.
#include <optional>
#include <string>

#include "core/verdict.hpp"
#include "store/result_store.hpp"

namespace kbv {

struct ResumeChoice {
  bool evaluate = true;
  std::string why;  // "not stored", "stored", "stored internal_error (kbv's fault)", ...
};

// What this run measures beyond the key: a stored verdict without it is measured again.
struct ResumeWants {
  std::string hidden_tests_sha256;  // "" when the run has no hidden-test file for the problem
  bool torch_compile = false;
};

ResumeChoice resume_choice(const std::optional<StoredVerdictSummary>& stored, const VerdictLimits& limits,
                           const ResumeWants& wants = {});

}  // namespace kbv
