#pragma once
// The timing phase's shared rules: what its rounds (timing_phase.cpp) and the judgement of a
// finished series against the idle device (timing_finish.cpp) both use.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/speed_bound.hpp"
#include "core/verdict.hpp"

namespace kbv::judge {

// The candidate's (and the twin's) input slot for every timed call.
inline constexpr std::uint32_t kTimingSlot = 0;
// device_busy: the idle hop is timed kIdleHops times once the sandbox has ended; a round's hop
// above 1.25x the idle 90th percentile + 20 us (ungated: and at least 0.5 ms above it) is busy;
// more than kBusyShare of them is a flag.
inline constexpr int kIdleHops = 40;
inline constexpr double kBusyShare = 0.25;
// Gated, the rounds' hop median more than this above the idle one (ms, or 5% of it) is busy too:
// work that slows every switch alike by less than the per-round limit still moves the median
// (honest runs on the H200: within 1 us).
inline constexpr double kHopShiftMs = 0.02;
// A forward() that synchronises the gated stream waits this long before the gate opens by itself
// (and the rest of the timing runs ungated, saying so).
inline constexpr auto kGateTimeout = std::chrono::milliseconds(250);
// The gate of an untimed call (correctness, strict's untimed calls) only orders the call's work
// before its inputs: it holds nothing that is timed, so a forward() that synchronises waits this
// long, on every such call (a timeout never turns the gate off for the calls after it: a
// candidate that synchronises once must not make its later calls ungated).
inline constexpr auto kCallGateTimeout = std::chrono::milliseconds(50);
// Warm-up ends early once the first samples prove stable: kWarmStableRounds rounds in a row in
// which every callable's sample is within kWarmStableRel of its sample the round before (module
// loading, handle creation and autotuning make a first call many times slower; on the H200 the
// warm samples of one callable vary by a few percent). warmup_seconds stays the most it takes.
inline constexpr int kWarmStableRounds = 2;
inline constexpr double kWarmStableRel = 0.10;
bool warm_round_stable(const std::vector<double>& previous, const std::vector<double>& current);
// Where samples jitter by more than the band (a loaded CPU, a kernel whose time varies), one
// stray sample in any callable breaks the run above: the same test on each callable's median of
// its last kWarmWindow samples passes spikes and still sees a first call's slowness or a drift.
inline constexpr int kWarmWindow = 3;
class WarmupStability {
 public:
  // One warm-up round's samples, one per callable in a fixed order: true once warm-up may end
  // (the samples, or their rolling medians, stable kWarmStableRounds rounds in a row).
  bool add(const std::vector<double>& samples);
  void reset() { *this = WarmupStability{}; }

 private:
  std::vector<std::vector<double>> window_;  // the last kWarmWindow rounds' samples
  std::vector<double> last_samples_, last_medians_;
  int stable_samples_ = 0, stable_medians_ = 0;
};
// A sample with the hop taken out. The floor, 2 us, is about the shortest a kernel launch lasts
// on the GPU: a call cannot be credited with less, however close to the hop it lands (a call
// with no kernel stalled to just above the hop would otherwise be a 10^5-fold speedup).
inline constexpr double kMinCallMs = 0.002;

double median_of(std::vector<double> v);
inline double net(double ms, double hop_ms) { return ms - hop_ms > kMinCallMs ? ms - hop_ms : kMinCallMs; }
// On the CPU an honest call does everything the twin's null call does and its forward()
// besides: a candidate that answers faster than half of that did not run its calls as the
// protocol asks (half: a trivial forward() is as fast as the null call, give or take noise).
// On the GPU a call that pays the null call's context switch takes at least about the hop
// (0.9: a kernel as tiny as the twin's lands within a few us of it, the switch is ~280 us).
// The loop's stopping rule and the reported figures both use this rule.
bool below_hop(const std::vector<double>& candidate, double hop, bool cuda);
// Candidate samples credited the floor: the call ended within kMinCallMs of the hop (none when
// its samples are kept whole, below the hop).
int floor_samples(const std::vector<double>& candidate, double hop, bool below);
// Half the samples or more at the floor: rests_on_floor (core/speed_bound.hpp).
// On the GPU the null call pays a switch into the twin's context, and a call that runs no
// kernel in the sandbox's context (one that returns a view of its input) pays none: taking the
// hop out would leave nothing. Its samples are kept whole, an upper bound on its time.
inline double candidate_net(double ms, double hop, bool below) { return below ? ms : net(ms, hop); }
SeriesStats summarize_series(const std::string& name, const std::vector<double>& samples);
SpeedupResult summarize_speedup(const std::string& baseline, const std::vector<double>& ratios);

}  // namespace kbv::judge
