#pragma once
// Hand-made verdicts for the store and report tests, and a synthetic multi-model suite for the
// HTML screenshot check. Nothing here runs a worker.
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/protocol.hpp"
#include "core/verdict.hpp"
#include "store/result_fields.hpp"

namespace kbv::testing {

struct FakeVerdict {
  std::string run = "model-a";
  int level = 1;
  int problem = 1;
  int sample = 0;
  std::string protocol = "verified";
  Outcome outcome = Outcome::correct;
  std::optional<double> speedup_off;  // speedup vs eager_tf32_off
  std::optional<double> speedup_on;   // speedup vs eager_tf32_on
  std::optional<std::pair<std::int64_t, std::int64_t>> memory;  // (candidate, baseline) peak device bytes
  std::pair<std::int64_t, std::int64_t> held{0, 0};              // (candidate, baseline) held between calls
  std::vector<Flag> flags;
  std::string precision = "fp32";
  std::string device = "NVIDIA H200";
  std::string stage;  // "" = what the outcome implies
  std::string candidate_sha;  // "" = derived from run/level/problem/sample
  std::map<std::string, double> stage_seconds;  // when set, wall_seconds is their sum (else 3.5)
};

inline Verdict make_verdict(const FakeVerdict& f) {
  Verdict v;
  v.protocol = f.protocol;
  v.protocol_version = 1;
  v.precision = f.precision;
  v.outcome = f.outcome;
  v.stage = !f.stage.empty() ? f.stage : (f.outcome == Outcome::compile_error ? "build" : "done");
  if (f.outcome != Outcome::correct) v.reason = fmt::format("{} on purpose", outcome_name(f.outcome));
  v.problem = {fmt::format("/suite/level{}/{}_P{}.py", f.level, f.problem, f.problem), fmt::format("psha-{}-{}", f.level, f.problem),
               f.level, f.problem, fmt::format("P{}", f.problem), "default"};
  v.candidate = {fmt::format("/runs/{}/level_{}_problem_{}_sample_{}_kernel.py", f.run, f.level, f.problem, f.sample),
                 f.candidate_sha.empty() ? fmt::format("csha-{}-{}-{}-{}", f.run, f.level, f.problem, f.sample) : f.candidate_sha};
  v.device = {"cuda", f.device, "9.0", 50 << 20, 150LL << 30, "565.57"};
  v.provenance = {"0.1.0", "abc1234", "2.5.1", "12.4", "3.11.9", "host", "2026-12-01T00:00:00Z", {"kbv", "run"}};
  v.custom_kernel = f.outcome != Outcome::compile_error;
  v.flags = f.flags;
  v.wall_seconds = 3.5;
  if (f.outcome != Outcome::compile_error) v.build = BuildResult{1.25, "/b", "/b/log", "", {}};
  if (f.outcome == Outcome::correct || f.outcome == Outcome::incorrect) {
    CorrectnessResult c{1e-3, 1e-3, {}, {}};
    c.distributions.push_back({"D1_x1", "scaled", DistributionStatus::pass, "", 0, 0, 0, 16, ""});
    c.distributions.push_back({"D4_neg", "scaled", f.outcome == Outcome::correct ? DistributionStatus::pass : DistributionStatus::fail,
                               "", 0, 0, 0, 16, ""});
    v.correctness = c;
  }
  if (f.outcome == Outcome::correct && (f.speedup_off || f.speedup_on)) {
    TimingResult t;
    t.clock = "cuda_events";
    t.primary_baseline = std::string(baseline_name(protocol_by_name(f.protocol).baseline));
    t.rounds = 4;
    t.stop_reason = "converged";
    t.series.push_back({"candidate", 4, 1.0, 0.95, 1.05, 0.9, 1.2, 1.0125, {0.9, 1.0, 1.0, 1.15}});
    auto add = [&](const char* name, std::optional<double> sp) {
      if (!sp) return;
      t.series.push_back({name, 4, *sp, *sp, *sp, *sp, *sp, *sp, {*sp, *sp, *sp, *sp}});
      t.speedups.push_back({name, *sp, *sp * 0.98, *sp * 1.02, *sp > 1.01 ? "FASTER" : (*sp < 0.99 ? "SLOWER" : "SAME")});
    };
    add("eager_tf32_off", f.speedup_off);
    add("eager_tf32_on", f.speedup_on);
    v.timing = t;
  }
  v.stage_seconds = f.stage_seconds;
  if (!f.stage_seconds.empty()) v.wall_seconds = 0;
  for (const auto& [stage, seconds] : f.stage_seconds) v.wall_seconds += seconds;
  if (f.memory) {
    MemoryResult m;
    m.method = "cupti_allocation_callbacks";
    m.candidate = {f.memory->first, f.memory->first, f.held.first};
    m.baseline = {f.memory->second, f.memory->second, f.held.second};
    m.ratio_device = f.memory->second ? static_cast<double>(f.memory->first) / static_cast<double>(f.memory->second) : 0;
    m.ratio_allocated = m.ratio_device;
    v.memory = m;
  }
  return v;
}

inline SampleRef make_sample(const FakeVerdict& f) {
  return {f.run, fmt::format("runs/{}/level_{}_problem_{}_sample_{}_kernel.py", f.run, f.level, f.problem, f.sample), f.level,
          f.problem, f.sample};
}

inline VerdictRecord make_record(const FakeVerdict& f) { return {make_sample(f), make_verdict(f), 0, "t0", "t0"}; }

// A deterministic, plausible suite: three models, two levels, three protocols, two samples
// each; TF32-sensitive problems inflate standard speedups; strict catches a few hacks; one
// problem is degenerate and one is broken.
inline std::vector<VerdictRecord> synthetic_suite() {
  std::uint64_t state = 0x9E3779B97F4A7C15ull;
  auto rnd = [&state]() {  // xorshift64*, uniform in [0, 1)
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return static_cast<double>((state * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0;
  };
  const std::vector<std::pair<std::string, double>> models{{"gpt-x", 0.75}, {"claude-y", 0.65}, {"llama-z", 0.4}};
  std::vector<VerdictRecord> out;
  for (const auto& [model, skill] : models)
    for (int level = 1; level <= 2; ++level)
      for (int problem = 1; problem <= 14; ++problem) {
        bool matmul_like = problem % 3 == 0;     // TF32 makes the baseline much faster
        bool shortcut = problem % 7 == 5;        // passes get_inputs(), fails hidden inputs
        for (int sample = 0; sample < 2; ++sample) {
          double u = rnd();
          double base = std::exp((rnd() - 0.45) * 1.6 + skill * 0.6);  // speedup vs TF32 on
          double tf32 = matmul_like ? 3.0 + 3.0 * rnd() : 1.0 + 0.05 * rnd();
          auto mem = std::make_pair<std::int64_t, std::int64_t>(static_cast<std::int64_t>((0.5 + rnd() * 1.2) * (64 << 20)), 64 << 20);
          bool compiles = u < 0.55 + 0.4 * skill;
          bool correct = compiles && rnd() < 0.35 + 0.6 * skill;
          for (const std::string protocol : {"standard", "verified", "strict"}) {
            FakeVerdict f;
            f.run = model;
            f.level = level;
            f.problem = problem;
            f.sample = sample;
            f.protocol = protocol;
            bool ok = correct && !(shortcut && protocol != "standard") && !(protocol == "strict" && rnd() < 0.08);
            f.outcome = !compiles ? Outcome::compile_error : (ok ? Outcome::correct : Outcome::incorrect);
            if (ok) {
              f.speedup_on = base;
              f.speedup_off = base * tf32;
              if (protocol != "standard") f.memory = mem;
            }
            if (protocol == "strict" && compiles && rnd() < 0.1) {
              f.flags.push_back(rnd() < 0.5 ? Flag{"unsynchronized_work", "kernel on stream 7 ended after forward returned"}
                                            : Flag{"result_reuse", "output unchanged after inputs were rewritten in place"});
              f.outcome = Outcome::incorrect;
              f.speedup_on.reset();
              f.speedup_off.reset();
              f.memory.reset();
            }
            if (level == 1 && problem == 4 && protocol == "strict") f.flags.push_back({"degenerate", "a trivial output passes every distribution: reference output is all zeros"});
            if (level == 2 && problem == 9) {
              f.outcome = Outcome::problem_error;
              f.speedup_on.reset();
              f.speedup_off.reset();
              f.memory.reset();
            }
            auto r = make_record(f);
            if (r.verdict.outcome == Outcome::problem_error) r.verdict.reason = "get_inputs() raised: shape mismatch";
            out.push_back(std::move(r));
          }
        }
      }
  return out;
}

}  // namespace kbv::testing
