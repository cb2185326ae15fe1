#pragma once
// What a `kbv run` judged, said once at its end: how many verdicts of each outcome, why the
// skipped ones were skipped (a CPU run skips every CUDA candidate), and the first cause of
// kbv's own failures, so that a run which judged little or nothing never reads as success.
#include <cstddef>
#include <iosfwd>
#include <map>
#include <mutex>
#include <string>

#include "core/verdict.hpp"

namespace kbv {

// The skip reason a CPU device gives a candidate with CUDA sources (judge/candidate_phase.cpp).
bool skipped_for_cuda(const Verdict& v);

class RunOutcomes {
 public:
  // One verdict of this run (thread-safe: builders and evaluators call it).
  void add(const Verdict& v);

  std::size_t total() const;
  std::size_t count(Outcome o) const;
  // Every verdict of the run is an internal_error (and there was at least one): kbv judged nothing.
  bool all_internal_errors() const;

  // "kbv run: outcomes of the N verdict(s) of this run: 3 correct, 5 skipped", then a line per
  // kind of trouble: "5 of 8 skipped: CUDA candidates need a GPU (...)", the first internal
  // error's reason, and a warning when nothing was judged.
  void describe(std::ostream& out) const;

 private:
  mutable std::mutex mutex_;
  std::map<Outcome, std::size_t> counts_;
  std::size_t cuda_skips_ = 0;
  std::string first_skip_reason_;      // of a skip other than CUDA-on-CPU
  std::string first_internal_error_;   // its reason
};

}  // namespace kbv
