// The timing phase's last part, once the candidate's sandbox has ended: the hop of the idle
// device (no context of the candidate's left on it), and each protocol's timing draft judged
// against it (device_busy, the CPU's null call) and summarised into series and speedups.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include <cuda_runtime_api.h>

#include "core/speed_bound.hpp"
#include "core/timing_note.hpp"
#include "cuda/stream_gate.hpp"
#include "ipc/message_fields.hpp"
#include "judge/integrity.hpp"
#include "judge/judgement.hpp"
#include "judge/l2_flush.hpp"
#include "judge/timing_rules.hpp"
#include "stats/compare.hpp"
#include "stats/median_ci.hpp"
#include "stats/summary.hpp"

namespace kbv::judge {

bool warm_round_stable(const std::vector<double>& previous, const std::vector<double>& current) {
  if (previous.size() != current.size() || current.empty()) return false;
  for (std::size_t i = 0; i < current.size(); ++i)
    if (!(previous[i] > 0) || !(std::abs(current[i] - previous[i]) <= kWarmStableRel * previous[i])) return false;
  return true;
}

bool WarmupStability::add(const std::vector<double>& samples) {
  stable_samples_ = warm_round_stable(last_samples_, samples) ? stable_samples_ + 1 : 0;
  last_samples_ = samples;
  window_.push_back(samples);
  if (window_.size() > static_cast<std::size_t>(kWarmWindow)) window_.erase(window_.begin());
  if (window_.size() == static_cast<std::size_t>(kWarmWindow)) {
    std::vector<double> medians;
    for (std::size_t i = 0; i < samples.size(); ++i) {
      std::vector<double> column;
      for (const auto& round : window_) column.push_back(i < round.size() ? round[i] : 0.0);
      medians.push_back(median_of(std::move(column)));
    }
    stable_medians_ = warm_round_stable(last_medians_, medians) ? stable_medians_ + 1 : 0;
    last_medians_ = std::move(medians);
  }
  return stable_samples_ >= kWarmStableRounds || stable_medians_ >= kWarmStableRounds;
}

double median_of(std::vector<double> v) { return v.empty() ? 0 : stats::quantile(v, 0.5); }

bool below_hop(const std::vector<double>& candidate, double hop, bool cuda) {
  return !candidate.empty() && median_of(candidate) < (cuda ? 0.9 : 0.5) * hop;
}

int floor_samples(const std::vector<double>& candidate, double hop, bool below) {
  if (below) return 0;
  return static_cast<int>(std::count_if(candidate.begin(), candidate.end(), [&](double ms) { return ms - hop <= kMinCallMs; }));
}

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

// The twin's null call, as the rounds timed it (judge stream -> twin -> judge stream), with no
// sandbox alive. Anything failing here is kbv's own.
std::vector<double> Judgement::idle_hop_samples(bool gated) {
  const bool cuda = device_.is_cuda();
  const std::string what = "timing: the idle hop";
  L2Flush flush(device_, verdict_.device.l2_bytes);
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  if (cuda) {
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
  }
  std::vector<double> out;
  for (int k = 0; k < kIdleHops; ++k) {
    if (cuda) reset_persisting_l2(device_);
    std::optional<cuda::StreamGate> gate;
    if (gated) {
      gate.emplace(std::chrono::duration_cast<std::chrono::milliseconds>(kGateTimeout));
      if (!gate->close(stream_)) gate.reset();
    }
    flush.flush();
    std::uint32_t seq = twin_->next_seq();
    std::string error, token;
    auto t0 = std::chrono::steady_clock::now();
    if (cuda) {
      cudaEventRecord(e0, static_cast<cudaStream_t>(stream_));
      if (!twin_->queue_start(stream_, seq, &error)) throw Ending{Outcome::internal_error, what + ": " + error};
    }
    nlohmann::json called, completed;
    try {
      token = twin_->call(seq, kTimingSlot);
      called = twin_->receive_answer("called", seq, token, run_deadline_);
      if (ipc::Fields(called, "called").str("status", 16) != "ok") throw ipc::ProtocolError("the twin's null call failed");
      if (cuda && !twin_->queue_wait_done(stream_, seq, &error)) throw ipc::ProtocolError(error);
      if (cuda) cudaEventRecord(e1, static_cast<cudaStream_t>(stream_));
      auto t1 = std::chrono::steady_clock::now();
      if (gate) gate->open();
      completed = twin_->receive_answer("completed", seq, token, run_deadline_);
      wait_for_stream(what, twin_.get(), seq);
      float ms = 0;
      if (cuda) cudaEventElapsedTime(&ms, e0, e1);
      out.push_back(cuda ? ms : std::chrono::duration<double, std::milli>(t1 - t0).count());
    } catch (const std::exception& e) {
      twin_->release(seq);
      if (gate) gate->open();
      throw Ending{Outcome::internal_error, what + ": " + e.what()};
    }
  }
  if (cuda) {
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
  }
  return out;
}

void Judgement::finish_timing(const TimingDraft& d, const IdleHops& idle_hops) {
  TimingResult result = d.result;
  timed_beside_others_ = false;
  if (d.protocol != protocol_->name) result.rounds_of = d.protocol;
  const std::size_t hop_index = d.raw.size() - 1;
  const auto& hops = d.raw[hop_index];
  const std::vector<double>& idle = hops.empty() ? std::vector<double>{} : idle_hops.like(d);
  if (d.cuda && !idle.empty()) {
    // Gated, a hop is a GPU-side round trip that varies by a few us; ungated it carries the
    // host's latency too (on the H200 one evaluation's rounds read 0.51 ms against 0.32 ms idle,
    // bench/RESULTS.md 2026-12-02), so the limit keeps a 0.5 ms margin then. A kernel left
    // resident costs a whole time slice (~2 ms) per context switch either way.
    const double q90 = stats::quantile(idle, 0.9);
    const double limit = d.gated ? 1.25 * q90 + 0.02 : std::max(1.25 * q90 + 0.02, q90 + 0.5);
    const auto busy = std::count_if(hops.begin(), hops.end(), [&](double ms) { return ms > limit; });
    const double share = static_cast<double>(busy) / static_cast<double>(hops.size());
    result.idle_hop_ms = median_of(idle);
    result.busy_hop_share = share;
    const bool shifted = d.gated && median_of(hops) > *result.idle_hop_ms + std::max(kHopShiftMs, 0.05 * *result.idle_hop_ms);
    if (share > kBusyShare || shifted) {
      const std::string evidence = std::to_string(busy) + " of " + std::to_string(hops.size()) + " rounds' hops above " +
                                   std::to_string(limit) + " ms (median " + std::to_string(median_of(hops)) + " ms; " +
                                   std::to_string(*result.idle_hop_ms) + " ms once the sandbox had ended)";
      if (!d.other_processes.empty()) {
        // Another process had the device too: the busy hops cannot be told apart from its work.
        std::string pids;
        for (pid_t p : d.other_processes) pids += (pids.empty() ? "" : ", ") + std::to_string(p);
        timed_beside_others_ = true;
        warn("timing: the device was busy while the baselines were timed, " + evidence + ", and shared with process(es) " +
             pids + " that are not this evaluation's; the speedups are not to be trusted");
      } else if (strict()) {
        flag(FlagName::device_busy, evidence + ": the sandbox's context kept the GPU busy while the baselines were timed" +
                                        (d.nvml ? "" : " (no other process could be ruled out: " + d.nvml_error + ")"));
      } else {
        warn("timing: " + evidence + ": the sandbox's context kept the GPU busy while the baselines were timed; "
             "the speedups are not to be trusted");
      }
    }
  }

  const double hop = median_of(hops);
  const auto& candidate = d.raw[0];
  const bool below = below_hop(candidate, hop, d.cuda);
  // On the CPU, a candidate faster than half the null call did not make its calls as asked. The
  // null call measured without the sandbox alive counts too: on a loaded 2-core machine the
  // rounds' null calls read 2.9-3.6 ms where the candidate's honest calls took 0.7-1.0 ms.
  const double null_call = idle.empty() ? hop : std::min(hop, median_of(idle));
  if (below && !d.cuda && below_hop(candidate, null_call, d.cuda))
    throw Ending{Outcome::protocol_violation, "timing: the candidate's calls took " + std::to_string(median_of(candidate)) +
                                                  " ms, less than half of kbv's own null call (" + std::to_string(null_call) + " ms)"};
  // Its outputs were checked like everyone's.
  if (below)
    warn("timing: the candidate's calls took " + std::to_string(median_of(candidate)) + " ms, less than the null call (" +
         std::to_string(hop) + " ms): no GPU work ran in its context; its samples are not reduced by the hop");
  result.hop_ms = hop;
  result.hop_samples = static_cast<std::int64_t>(hops.size());
  result.gated = d.gated;
  for (std::size_t i = 0; i < hop_index; ++i) {
    std::vector<double> samples;
    for (double ms : d.raw[i]) samples.push_back(i == 0 ? candidate_net(ms, hop, below) : net(ms, hop));
    result.series.push_back(summarize_series(d.names[i], samples));
  }
  for (std::size_t i = 1; i < hop_index; ++i) {
    std::vector<double> ratios;
    for (std::size_t r = 0; r < candidate.size(); ++r) ratios.push_back(net(d.raw[i][r], hop) / candidate_net(candidate[r], hop, below));
    result.speedups.push_back(summarize_speedup(d.names[i], ratios));
  }
  // No speedup rests on the floor: where half the candidate's samples or more were credited the
  // floor, its time is below what timing across processes resolves (or its work ran outside the
  // window and the checks did not see it): its speedups are never FASTER.
  result.floor_samples = floor_samples(candidate, hop, below);
  if (rests_on_floor(result.floor_samples, candidate.size())) {
    const bool demoted = never_faster(result.speedups);
    warn("timing: " + std::to_string(result.floor_samples) + " of " + std::to_string(candidate.size()) +
         " candidate samples sit at the timer's floor (the call ended within " + std::to_string(static_cast<int>(kMinCallMs * 1000)) +
         " us of the null call): its speedup is below the resolution of timing across processes" +
         (demoted ? " and is reported UNSURE, not FASTER" : ""));
  }
  // A contended CPU: the baselines waited for a core while the sleeping sandbox was run ahead of
  // the load, so the ratio says nothing either way (host_contention.hpp). Without the kernel's
  // count (no CONFIG_SCHED_INFO) contention cannot be ruled out: the same. The report reads the
  // same rule (core/speed_bound.hpp).
  if (!result.speedups.empty() && cpu_timing_unreliable(result)) {
    const bool demoted = all_unsure(result.speedups);
    const std::string why =
        result.cpu_wait_share
            ? "the host's cores were contended: the judge's threads waited for a core " +
                  std::to_string(static_cast<int>(*result.cpu_wait_share * 100 + 0.5)) +
                  "% of the baselines' timed time (other processes kept the CPUs busy)"
            : "the host's contention could not be read (no /proc/self/task/*/schedstat)";
    warn("timing: " + why + ", so CPU speedups are not to be trusted" + (demoted ? "; they are reported UNSURE" : ""));
  }
  if (auto note = budget_note(result)) warn(*note);
  if (auto note = resolution_note(result, d.cuda)) warn(*note);
  verdict_.timing = result;
}

}  // namespace kbv::judge
