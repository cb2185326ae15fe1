#pragma once
// The judge's first use of its own device work, rehearsed while the sandbox imports the
// candidate. A fresh judge pays once for each kernel's first launch (CUDA loads modules lazily),
// for cuBLAS's handles and for its allocator's first segments; before this, the first protocol
// (strict) paid it inside its correctness stage, ~0.5 s per candidate on the H200, while the
// judge had just waited idle ~0.4 s for the sandbox's import (docs/scale.md).
//
// Everything rehearsed is the judge's own and nothing of it is kept: the problem file imported
// again as a module of its own (its globals are not the reference's), inputs from its
// get_inputs() under a seed of the rehearsal's, a Model instance of that module that is dropped
// after, and on them each fresh draw the job's protocols make, the comparisons, the trivial-
// output tests and strict's checks. Every later draw and construction reseeds torch's generators;
// the backend switches and TF32 are put back as they were. Nothing reaches a verdict, and a
// failure is left for the real stage to meet and report.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "core/protocol.hpp"

namespace kbv::judge {

struct RehearsalPlan {
  std::string problem_path;
  bool small_size = false;  // the problem's KBV_SMALL size, as the job asks
  at::Device device = at::kCPU;
  Precision precision = Precision::fp32;
  std::vector<const Protocol*> protocols;
  std::uint64_t model_seed = 0;
  // Called after each step (e.g. to note whether the sandbox has answered meanwhile).
  std::function<void()> after_step;
  // No step starts once the rehearsal has run this long (a huge Model's construction or forward).
  double budget_seconds = 10;
};

// KBV_JUDGE_REHEARSAL: "off" never (to measure what it saves), "on" on any device (the CPU tests
// run it), unset on CUDA devices only (a CPU has nothing to load).
bool rehearsal_wanted(const at::Device& device);

// Runs the rehearsal; what stopped it, if anything (the profile's business only).
std::optional<std::string> rehearse_device_work(const RehearsalPlan& plan);

}  // namespace kbv::judge
