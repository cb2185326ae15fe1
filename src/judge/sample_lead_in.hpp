#pragma once
// What the judge's stream runs right before every timed sample, after the gate opens and before
// the sample's first event: device work for a set stretch of device time (the wake), then the
// L2 flush.
//
// Why the wake: a sample that starts on a device that was idle runs slow, by more the longer it
// idled (bench/RESULTS.md, session 18, H200 at a steady 1980 MHz as NVML reports it: a
// ConvTranspose2d of 0.38 ms took 0.45 ms after a bare host round trip, 0.53 ms after 5 ms idle,
// 0.66 ms after 20 ms; 0.35-0.7 ms of device work right before it brought each back to 0.38).
// The gate holds the judge's stream while the host queues a call and waits for the sandbox's
// answer, so every sample follows such an idle stretch, of a length that varies with the host;
// and a compute-bound baseline pays more for it than a memory-bound candidate, so the ratio
// moved between evaluations (up to 15%) while each evaluation's CI said +-1%.
#include <cstdint>
#include <string>

#include <ATen/ATen.h>

#include "judge/l2_flush.hpp"

namespace kbv::judge {

// The wake's device time a sample, in microseconds, from `env` (KBV_WAKE_US; 0 turns the wake off,
// for measuring): kDefaultWakeUs when unset; anything but a number in [0, kMaxWakeUs] is the
// default too, with `error` saying so (the verdict warns).
inline constexpr double kDefaultWakeUs = 500;
inline constexpr double kMaxWakeUs = 5000;
double wake_us_setting(const char* env, std::string* error);

// How many passes over the flush buffer make at least `wake_us` of device time, one pass taking
// `pass_us` on an awake device; at most kMaxWakePasses (a pass slower than expected must not
// turn the wake into seconds), 0 with no wake or no measurable pass.
inline constexpr int kMaxWakePasses = 256;
int wake_passes(double wake_us, double pass_us);

class SampleLeadIn {
 public:
  // On a CUDA device, times one pass over the flush buffer on `stream` (the current stream) once
  // the device is awake, and sizes the wake from it. A no-op on the CPU.
  SampleLeadIn(const at::Device& device, std::int64_t l2_bytes, double wake_us, void* stream);
  // Queues the wake's passes, then the flush, on the current stream.
  void queue();
  std::int64_t flush_bytes() const { return flush_.bytes(); }
  // The wake's device time a sample as sized (passes x one pass), 0 when off or on the CPU.
  double wake_us() const { return passes_ * pass_us_; }

 private:
  L2Flush flush_;
  int passes_ = 0;
  double pass_us_ = 0;
};

}  // namespace kbv::judge
