#pragma once
// What happened to one (problem, candidate) evaluation. One value per verdict; integrity
// problems are a separate list of flags (see flags in verdict.hpp).
#include <optional>
#include <string>
#include <string_view>

namespace kbv {

enum class Outcome {
  correct,        // built, ran, matched the reference on every valid distribution
  incorrect,      // ran, but some distribution did not match (shape, dtype, NaN pattern, tolerance)
  compile_error,  // the candidate's extension(s) failed to build, or it failed to import
  runtime_error,  // a Python exception or CUDA error while running the candidate
  timeout,        // a stage ran past its time limit; the worker's process group was killed
  crashed,        // the worker died without a verdict (signal, os._exit, abort)
  skipped,        // not evaluated on purpose (e.g. a CUDA-only candidate on a CPU device)
  problem_error,  // the problem itself is broken (import, get_inputs, reference forward)
  // The candidate's sandbox broke the judge<->sandbox protocol: a malformed or forged message, an
  // output the judge cannot read, a reply after its deadline. The candidate's fault.
  protocol_violation,
  // kbv itself failed (a worker that could not start, a store or environment fault). Never the
  // candidate's result: a resumed run evaluates it again.
  internal_error,
};

std::string_view outcome_name(Outcome o);
std::optional<Outcome> outcome_from_name(std::string_view name);

}  // namespace kbv
