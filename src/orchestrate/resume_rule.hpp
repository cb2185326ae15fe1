#pragma once
// Whether `kbv run` evaluates a job again, given what the store holds under its key. A stored
// verdict is kept unless it is not the candidate's result after all:
//  - internal_error: kbv's own fault;
//  - an outcome this kbv cannot read;
//  - a timeout under a smaller limit than this run's, for the stage that ran out (the build
//    stage under --compile-timeout, the others under --run-timeout). A timeout stored without
//    its limits (written before kbv recorded them) is kept: nothing says the limit was smaller.
#include <optional>
#include <string>

#include "core/verdict.hpp"
#include "store/result_store.hpp"

namespace kbv {

struct ResumeChoice {
  bool evaluate = true;
  std::string why;  // "not stored", "stored", "stored internal_error (kbv's fault)", ...
};

ResumeChoice resume_choice(const std::optional<StoredVerdictSummary>& stored, const VerdictLimits& limits);

}  // namespace kbv
