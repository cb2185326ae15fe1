// Outcomes, protocols and the verdict JSON: the vocabulary every other part relies on.
#include <gtest/gtest.h>

#include <set>

#include "core/errors.hpp"
#include "core/flags.hpp"
#include "core/outcome.hpp"
#include "core/protocol.hpp"
#include "core/sha256.hpp"
#include "core/verdict.hpp"

namespace kbv {
namespace {

TEST(Outcome, NamesRoundTrip) {
  for (auto o : {Outcome::correct, Outcome::incorrect, Outcome::compile_error, Outcome::runtime_error,
                 Outcome::timeout, Outcome::crashed, Outcome::skipped, Outcome::problem_error}) {
    auto back = outcome_from_name(outcome_name(o));
    ASSERT_TRUE(back.has_value()) << outcome_name(o);
    EXPECT_EQ(*back, o);
  }
  EXPECT_FALSE(outcome_from_name("fine").has_value());
}

TEST(Protocol, StandardIsKernelBenchsFiveSeededTrials) {
  const auto& p = protocol_by_name("standard");
  EXPECT_EQ(p.baseline, BaselineKind::eager_tf32_off);
  auto d = p.distributions(123);
  ASSERT_EQ(d.size(), 5u);
  for (const auto& spec : d) EXPECT_EQ(spec.kind, DistributionKind::seeded_template);
  EXPECT_EQ(d, protocol_by_name("standard").distributions(999)) << "standard seeds are fixed";
}

TEST(Protocol, VerifiedScalesAreTheStudysFour) {
  const auto& p = protocol_by_name("verified");
  EXPECT_EQ(p.baseline, BaselineKind::eager_tf32_on);
  auto d = p.distributions(1);
  ASSERT_EQ(d.size(), 4u);
  std::vector<double> scales;
  for (const auto& spec : d) scales.push_back(spec.scale);
  EXPECT_EQ(scales, (std::vector<double>{1.0, 3.0, 0.01, -1.0}));
  EXPECT_EQ(d[3].name, "D4_neg");
}

TEST(Protocol, StrictSeedsAreSecretAndAddFreshDraws) {
  const auto& p = protocol_by_name("strict");
  auto a = p.distributions(1);
  auto b = p.distributions(2);
  ASSERT_EQ(a.size(), 10u);
  EXPECT_NE(a[0].seed, b[0].seed) << "a different secret must change the seeds";
  std::set<DistributionKind> kinds;
  for (const auto& spec : a) kinds.insert(spec.kind);
  for (auto k : {DistributionKind::normal, DistributionKind::heavy_tail, DistributionKind::zeros_ties,
                 DistributionKind::reinit_params, DistributionKind::sparse_spike, DistributionKind::wide_range})
    EXPECT_TRUE(kinds.count(k)) << distribution_kind_name(k);
  EXPECT_TRUE(p.nan_pattern_must_match);
}

TEST(Protocol, ToleranceFollowsPrecision) {
  const auto& p = protocol_by_name("verified");
  EXPECT_DOUBLE_EQ(p.tolerance(Precision::fp32).atol, 1e-3);
  EXPECT_DOUBLE_EQ(p.tolerance(Precision::bf16).rtol, 1e-2);
  EXPECT_THROW(protocol_by_name("lenient"), UsageError);
  EXPECT_THROW(precision_from_name("fp8"), UsageError);
}

TEST(Verdict, JsonRoundTripKeepsEveryPart) {
  Verdict v;
  v.protocol = "verified";
  v.protocol_version = 1;
  v.outcome = Outcome::incorrect;
  v.reason = "D4_neg: 512 of 4096 elements differ";
  v.problem.id = 19;
  v.problem.level = 1;
  v.correctness = CorrectnessResult{1e-3, 1e-3, {{"D4_neg", "scaled", DistributionStatus::fail, "x", 2.0, 1.0, 512, 4096}}, {}};
  TimingResult t;
  t.clock = "cuda_events";
  t.series.push_back({"candidate", 3, 1.0, 0.9, 1.1, 0.8, 1.2, 1.0, {0.8, 1.0, 1.2}});
  t.speedups.push_back({"eager_tf32_on", 1.5, 1.4, 1.6, "FASTER"});
  v.timing = t;
  v.flags = {{"input_mutated", "D1_x1: input 0 changed in 3 of 16 elements"}};

  nlohmann::json j = v;
  EXPECT_EQ(j.at("schema"), kVerdictSchema);
  EXPECT_EQ(j.at("outcome"), "incorrect");
  EXPECT_EQ(j.at("correctness").at("distributions")[0].at("status"), "fail");
  EXPECT_FALSE(j.contains("memory")) << "absent parts are omitted, not zero";

  Verdict back = j.get<Verdict>();
  EXPECT_EQ(back.outcome, Outcome::incorrect);
  ASSERT_TRUE(back.timing.has_value());
  EXPECT_EQ(back.timing->series[0].samples_ms.size(), 3u);
  EXPECT_DOUBLE_EQ(back.timing->speedups[0].ci_low, 1.4);
  EXPECT_EQ(back.flags, v.flags);
  EXPECT_FALSE(back.memory.has_value());
}

// The judge's observations of the sandbox (its freeze, the idle device, its processes' memory)
// survive the verdict's JSON, and absent ones stay absent.
TEST(Verdict, JudgeObservationsRoundTrip) {
  Verdict v;
  TimingResult t;
  t.sandbox_frozen = true;
  t.idle_hop_ms = 0.29;
  t.busy_hop_share = 0.68;
  t.cpu_wait_share = 0.31;
  t.rounds_of = "strict";
  v.timing = t;
  MemoryResult m;
  m.candidate.process_bytes = std::int64_t{1290} << 20;
  v.memory = m;
  Verdict back = nlohmann::json(v).get<Verdict>();
  EXPECT_TRUE(back.timing->sandbox_frozen);
  EXPECT_DOUBLE_EQ(*back.timing->idle_hop_ms, 0.29);
  EXPECT_DOUBLE_EQ(*back.timing->busy_hop_share, 0.68);
  EXPECT_DOUBLE_EQ(*back.timing->cpu_wait_share, 0.31);
  EXPECT_EQ(back.timing->rounds_of, "strict");
  EXPECT_EQ(*back.memory->candidate.process_bytes, std::int64_t{1290} << 20);
  EXPECT_FALSE(back.memory->baseline.process_bytes.has_value());
  nlohmann::json none = Verdict{};
  none["timing"] = TimingResult{};
  EXPECT_FALSE(none["timing"].contains("idle_hop_ms")) << "only the GPU has an idle hop";
  EXPECT_FALSE(none["timing"].contains("rounds_of")) << "a protocol's own rounds";
}

// The footprint reports compare: the sandbox's account, unless its processes held more than
// that plus the per-process overhead of the libraries it calls (kProcessOverheadBytes).
TEST(Verdict, FootprintTakesTheProcessesMemoryBeyondTheirOverhead) {
  constexpr std::int64_t MiB = std::int64_t{1} << 20;
  MemoryUse honest_matmul{64 * MiB, 64 * MiB, 0, 96 * MiB};  // cuBLAS's 32 MiB workspace on top
  EXPECT_EQ(honest_matmul.footprint_bytes(), 64 * MiB);
  MemoryUse parked{256 * MiB, 256 * MiB, 0, 1290 * MiB};  // 1 GiB parked outside the model's objects
  EXPECT_EQ(parked.footprint_bytes(), 1290 * MiB - MemoryUse::kProcessOverheadBytes);
  MemoryUse unread{10 * MiB, 20 * MiB, 5 * MiB, std::nullopt};
  EXPECT_EQ(unread.footprint_bytes(), 25 * MiB);
}

// device_busy is an integrity finding: under strict it makes a correct candidate incorrect.
TEST(Flags, DeviceBusyIsAnIntegrityFlag) {
  EXPECT_EQ(flag_name(FlagName::device_busy), "device_busy");
  EXPECT_TRUE(is_integrity_flag("device_busy"));
  EXPECT_EQ(flag_from_name("device_busy"), FlagName::device_busy);
}

TEST(Sha256, KnownVector) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_THROW(sha256_file("/nonexistent/kbv"), UsageError);
}

}  // namespace
}  // namespace kbv
