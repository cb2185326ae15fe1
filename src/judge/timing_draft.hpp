#pragma once
// A timing phase whose rounds are done but whose judgement waits for the idle device. The rounds
// run while the candidate's sandbox is alive; what they are judged against (the hop of a device
// without the sandbox's context, device_busy) can only be timed once the sandbox has ended, and
// one sandbox serves every protocol of its candidate (docs/architecture.md). So each protocol's
// rounds are kept as a draft, and the drafts are finished together after the sandbox's end.
#include <set>
#include <string>
#include <vector>

#include <sys/types.h>

#include "core/verdict.hpp"

namespace kbv::judge {

struct TimingDraft {
  TimingResult result;                    // all but the series, the speedups and the idle-hop figures
  std::vector<std::string> names;         // the series: candidate first, then baselines, the hop last
  std::vector<std::vector<double>> raw;   // per series, the counted rounds' samples (ms)
  bool cuda = false;
  bool gated = false;                     // as the rounds ended (the idle hop is timed the same way)
  std::set<pid_t> other_processes;        // on the device during the rounds, none of this evaluation's
  bool nvml = false;                      // the driver's per-process view was open
  std::string nvml_error;
  // Who timed it and how, for another protocol that takes these rounds as its own (judgement.cpp).
  std::string protocol;
  bool candidate_tf32 = false;            // the candidate's TF32 setting in its rounds
  std::vector<std::string> warnings;      // what the rounds warned
};

// The hop once the sandbox has ended, timed gated and ungated as the drafts need.
struct IdleHops {
  std::vector<double> gated, ungated;
  const std::vector<double>& like(const TimingDraft& d) const { return d.gated ? gated : ungated; }
};

}  // namespace kbv::judge
