#include "judge/sample_lead_in.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include <cuda_runtime_api.h>

namespace kbv::judge {

double wake_us_setting(const char* env, std::string* error) {
  if (!env || !*env) return kDefaultWakeUs;
  // A plain decimal only: strtod alone would also take " 500", hex and "inf".
  char* end = nullptr;
  const std::string text(env);
  const bool plain = (std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '.') &&
                     text.find_first_not_of("0123456789.eE+-") == std::string::npos;
  const double us = plain ? std::strtod(env, &end) : -1;
  if (!plain || *end != '\0' || !std::isfinite(us) || us < 0 || us > kMaxWakeUs) {
    if (error)
      *error = "KBV_WAKE_US='" + std::string(env) + "' is not a number of microseconds in [0, " +
               std::to_string(static_cast<int>(kMaxWakeUs)) + "]; the default " +
               std::to_string(static_cast<int>(kDefaultWakeUs)) + " was used";
    return kDefaultWakeUs;
  }
  return us;
}

int wake_passes(double wake_us, double pass_us) {
  if (!(wake_us > 0) || !(pass_us > 0)) return 0;
  return static_cast<int>(std::min<double>(kMaxWakePasses, std::ceil(wake_us / pass_us)));
}

SampleLeadIn::SampleLeadIn(const at::Device& device, std::int64_t l2_bytes, double wake_us, void* stream)
    : flush_(device, l2_bytes) {
  if (!device.is_cuda() || flush_.bytes() <= 0 || !(wake_us > 0)) return;
  auto s = static_cast<cudaStream_t>(stream);
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  if (cudaEventCreate(&e0) != cudaSuccess || cudaEventCreate(&e1) != cudaSuccess) return;
  // Wake the device first (the passes being timed must not pay for its idling), then take the
  // fastest of a few stretches of passes.
  constexpr int kWarm = 32, kTimed = 8, kTries = 3;
  for (int k = 0; k < kWarm; ++k) flush_.flush();
  float best = 0;
  for (int t = 0; t < kTries; ++t) {
    cudaEventRecord(e0, s);
    for (int k = 0; k < kTimed; ++k) flush_.flush();
    cudaEventRecord(e1, s);
    float ms = 0;
    if (cudaEventSynchronize(e1) == cudaSuccess && cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess && ms > 0)
      best = best > 0 ? std::min(best, ms) : ms;
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  pass_us_ = 1000.0 * best / kTimed;
  passes_ = wake_passes(wake_us, pass_us_);
}

void SampleLeadIn::queue() {
  for (int k = 0; k < passes_; ++k) flush_.flush();
  flush_.flush();
}

}  // namespace kbv::judge
