#pragma once
// Paired, interleaved timing of a candidate against baselines in one process: each round runs
// every callable once in a shuffled order, each sample behind an L2 flush and between device
// events on the current stream (or a steady clock on the CPU); rounds rotate over input sets;
// sampling stops when the 95% CI of the median per-round speedup is within the target, or when
// the time budget runs out (and the result says which).
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "core/job.hpp"
#include "core/verdict.hpp"

namespace kbv::worker {

struct TimedCallable {
  std::string name;                          // "candidate", "eager_tf32_off", ...
  std::function<void()> prepare;             // runs untimed before each sample (e.g. TF32 switch)
  std::function<void(std::size_t)> call;     // one forward on input set i
};

// Called after every round, outside the timed region (strict's result_reuse re-check).
using BetweenRounds = std::function<void(int round, std::size_t input_set)>;

// callables[0] is the candidate; speedups are reported for each other callable against it.
// `primary` names the baseline whose CI decides when to stop.
TimingResult time_interleaved(const std::vector<TimedCallable>& callables, std::size_t input_sets,
                              const std::string& primary, const TimingOptions& options,
                              const at::Device& device, std::int64_t l2_bytes,
                              const BetweenRounds& between_rounds = {});

}  // namespace kbv::worker
