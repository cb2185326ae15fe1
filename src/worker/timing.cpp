#include "worker/timing.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <random>

#include <ATen/cuda/CUDAEvent.h>

#include "stats/compare.hpp"
#include "stats/median_ci.hpp"
#include "stats/stopping_rule.hpp"
#include "stats/summary.hpp"
#include "worker/device.hpp"
#include "worker/l2_flush.hpp"

namespace kbv::worker {
namespace {

using SteadyClock = std::chrono::steady_clock;

double seconds_since(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

// One sample's clock: device events recorded on the current stream, or a host steady clock
// (CPU work is synchronous).
class SampleClock {
 public:
  explicit SampleClock(bool cuda) : cuda_(cuda) {
    if (cuda_) {
      start_ = std::make_unique<at::cuda::CUDAEvent>(cudaEventDefault);
      end_ = std::make_unique<at::cuda::CUDAEvent>(cudaEventDefault);
    }
  }
  void start() {
    if (cuda_) start_->record(); else host_start_ = SteadyClock::now();
  }
  void stop() {
    if (cuda_) end_->record(); else host_ms_ = std::chrono::duration<double, std::milli>(SteadyClock::now() - host_start_).count();
  }
  // Valid after the device was synchronised.
  double elapsed_ms() const { return cuda_ ? start_->elapsed_time(*end_) : host_ms_; }

 private:
  bool cuda_;
  std::unique_ptr<at::cuda::CUDAEvent> start_, end_;
  SteadyClock::time_point host_start_;
  double host_ms_ = 0;
};

SeriesStats summarize_series(const std::string& name, const std::vector<double>& samples) {
  SeriesStats s;
  s.name = name;
  s.samples = static_cast<std::int64_t>(samples.size());
  s.samples_ms = samples;
  if (samples.empty()) return s;
  auto sum = stats::summarize(samples);
  s.median_ms = sum.median;
  s.q1_ms = sum.q1;
  s.q3_ms = sum.q3;
  s.min_ms = sum.min;
  s.max_ms = sum.max;
  s.mean_ms = sum.mean;
  return s;
}

SpeedupResult summarize_speedup(const std::string& baseline, const std::vector<double>& ratios) {
  SpeedupResult r;
  r.baseline = baseline;
  if (ratios.empty()) return r;
  r.median = stats::quantile(ratios, 0.5);
  auto ci = stats::median_ci(ratios);
  r.ci_low = ci.low;
  r.ci_high = ci.high;
  r.compare = std::string(stats::compare_speedup(ci));
  return r;
}

}  // namespace

TimingResult time_interleaved(const std::vector<TimedCallable>& callables, std::size_t input_sets,
                              const std::string& primary, const TimingOptions& options,
                              const at::Device& device, std::int64_t l2_bytes,
                              const BetweenRounds& between_rounds) {
  const bool cuda = device.is_cuda();
  const std::size_t n = callables.size();
  TimingResult result;
  result.clock = cuda ? "cuda_events" : "cpu_steady_clock";
  result.primary_baseline = primary;
  result.input_sets = static_cast<int>(input_sets);
  result.target_rel_ci = options.target_rel_ci;

  L2Flush flush(device, l2_bytes);
  result.l2_flush = flush.bytes() > 0;
  result.l2_flush_bytes = flush.bytes();

  // Warm-up: module loads, cuBLAS/cuDNN handles and autotuning stay out of the samples.
  auto warm_start = SteadyClock::now();
  int warm_rounds = 0;
  while (warm_rounds < 3 || (seconds_since(warm_start) < options.warmup_seconds && warm_rounds < 1000)) {
    for (const auto& c : callables) {
      c.prepare();
      c.call(static_cast<std::size_t>(warm_rounds) % input_sets);
    }
    synchronize(device);
    ++warm_rounds;
  }
  result.warmup_rounds = warm_rounds;

  std::vector<std::vector<double>> samples(n);
  std::vector<std::vector<double>> ratios(n);  // ratios[b][round] = baseline_b / candidate
  std::size_t primary_index = 0;
  for (std::size_t i = 1; i < n; ++i)
    if (callables[i].name == primary) primary_index = i;

  std::vector<SampleClock> clocks;
  for (std::size_t i = 0; i < n; ++i) clocks.emplace_back(cuda);
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::mt19937 shuffle_rng(0x6b6276);  // fixed: the order varies per round, reproducibly

  stats::StoppingRule rule;
  rule.min_rounds = options.min_rounds;
  rule.min_seconds = options.min_seconds;
  rule.budget_seconds = options.budget_seconds;
  rule.target_rel_half_width = options.target_rel_ci;

  auto start = SteadyClock::now();
  auto decision = stats::StopDecision::keep_going;
  int round = 0;
  while (decision == stats::StopDecision::keep_going) {
    std::shuffle(order.begin(), order.end(), shuffle_rng);
    std::size_t set = static_cast<std::size_t>(round) % input_sets;
    for (std::size_t i : order) {
      callables[i].prepare();
      flush.flush();
      clocks[i].start();
      callables[i].call(set);
      clocks[i].stop();
    }
    synchronize(device);
    for (std::size_t i = 0; i < n; ++i) samples[i].push_back(clocks[i].elapsed_ms());
    double candidate_ms = samples[0].back();
    for (std::size_t i = 1; i < n; ++i)
      ratios[i].push_back(candidate_ms > 0 ? samples[i].back() / candidate_ms : 0.0);
    if (between_rounds) between_rounds(round, set);
    ++round;
    const auto& deciding = primary_index > 0 ? ratios[primary_index] : samples[0];
    decision = stats::should_stop(rule, deciding, seconds_since(start));
  }
  result.rounds = round;
  result.seconds = seconds_since(start);
  result.stop_reason = std::string(stats::stop_decision_name(decision));

  for (std::size_t i = 0; i < n; ++i) result.series.push_back(summarize_series(callables[i].name, samples[i]));
  for (std::size_t i = 1; i < n; ++i) result.speedups.push_back(summarize_speedup(callables[i].name, ratios[i]));
  return result;
}

}  // namespace kbv::worker
