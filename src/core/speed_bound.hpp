#pragma once
// The fastest a correct candidate can possibly be: its outputs must be written, and whatever of
// them does not fit in L2 must reach device memory within the timed call. A median time below
// (output bytes beyond L2) / (the device's theoretical peak DRAM bandwidth) is not a fast kernel
// but a timing that missed work (a side stream or thread the other checks did not see, or a
// clock the candidate got around). Torch-free arithmetic, so it is tested on any machine.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/verdict.hpp"

namespace kbv {

// Flags only beyond this factor: the theoretical peak is never reached by real kernels, so a
// margin keeps clock-reporting quirks and compression-friendly outputs from ever tripping it.
inline constexpr double kSpeedBoundMargin = 1.5;

// Theoretical peak DRAM bandwidth from the memory clock (kHz) and bus width (bits), double data
// rate: what cudaDevAttrMemoryClockRate and cudaDevAttrGlobalMemoryBusWidth report. 0 if either
// is unknown.
double peak_dram_bytes_per_s(std::int64_t memory_clock_khz, std::int64_t bus_width_bits);

// The shortest time, in ms, in which `output_bytes` can be written past an L2 of `l2_bytes` at
// `peak_bytes_per_s`; 0 when everything fits in L2 or the peak is unknown.
double min_write_ms(std::int64_t output_bytes, std::int64_t l2_bytes, double peak_bytes_per_s);

// Evidence for the implausible_speed flag when median_ms * kSpeedBoundMargin is still below
// min_write_ms(...); nullopt when the time is physically possible or nothing can be said.
std::optional<std::string> implausible_speed(std::int64_t output_bytes, std::int64_t l2_bytes,
                                             double peak_bytes_per_s, double median_ms);

// A speedup that is no figure to credit (half the candidate's samples at the timer's floor, or a
// time below the bound above that the judge could not hold against the candidate because other
// processes shared the device while it was timed): every FASTER becomes UNSURE. Returns whether
// any did.
bool never_faster(std::vector<SpeedupResult>& speedups);

// CPU timing on a contended host (the judge's threads waited for a core for more than this share
// of the baselines' sampled time, judge/host_contention.hpp): the speedups say nothing, in either
// direction. Idle, the 2-core machine reads below 1%; beside one busy loop per core, tens of
// percent (bench/RESULTS.md, session 23).
inline constexpr double kContendedWaitShare = 0.10;
inline bool cpu_timing_contended(const std::optional<double>& wait_share) {
  return wait_share && *wait_share > kContendedWaitShare;
}
// A CPU timing whose speedup is no figure: contended, or its contention never read (a kernel
// without the count, a verdict of a kbv before the count).
inline bool cpu_timing_unreliable(const TimingResult& t) {
  return t.clock == "cpu_steady_clock" && (!t.cpu_wait_share || cpu_timing_contended(t.cpu_wait_share));
}

// Every FASTER and SLOWER becomes UNSURE (a timing that cannot tell either); returns whether any did.
bool all_unsure(std::vector<SpeedupResult>& speedups);

// Half the candidate's samples or more at the timer's floor: the speedup rests on the floor, not
// on the kernel. The judge then never says FASTER; the report counts the problem correct, never
// fast, and leaves its speedup out of the average.
inline bool rests_on_floor(int at_floor, std::size_t samples) {
  return samples > 0 && 2 * static_cast<std::size_t>(at_floor) >= samples;
}

}  // namespace kbv
