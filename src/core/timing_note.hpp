#pragma once
// Why a speedup did not reach its target interval (issue 14: "every speedup reaches +-1% or the
// verdict says why not"). The judge adds the note to the verdict's warnings when the timing
// budget ran out first.
#include <optional>
#include <string>

#include "core/verdict.hpp"

namespace kbv {

// Calls whose net time (the hop taken out) is this short are at the resolution of timing across
// processes on the GPU: the hop's own jitter is a few us and no call is credited below 2 us.
inline constexpr double kCrossProcessResolutionMs = 0.01;

// For a timing that stopped on its budget: the interval reached against the target and the
// series that varied most (its interquartile range against its median). nullopt when it
// converged or has no speedup.
std::optional<std::string> budget_note(const TimingResult& timing);

// On the GPU, converged or not: a series whose median is within the cross-process resolution,
// where a speedup says little about the kernel. nullopt when none is (or on the CPU).
std::optional<std::string> resolution_note(const TimingResult& timing, bool gpu);

}  // namespace kbv
