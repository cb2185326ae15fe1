// Report aggregates on hand-made verdict sets whose answers are known.
#include <gtest/gtest.h>

#include <cmath>

#include "../support/report_fixtures.hpp"
#include "core/errors.hpp"
#include "report/aggregates.hpp"

namespace kbv {
namespace {

using testing::FakeVerdict;
using testing::make_record;

FakeVerdict correct(int problem, double speedup_on, int sample = 0, const std::string& run = "model-a") {
  FakeVerdict f;
  f.run = run;
  f.problem = problem;
  f.sample = sample;
  f.speedup_on = speedup_on;
  f.speedup_off = speedup_on * 4;
  return f;
}

FakeVerdict failed(int problem, Outcome outcome, int sample = 0, const std::string& run = "model-a") {
  FakeVerdict f;
  f.run = run;
  f.problem = problem;
  f.sample = sample;
  f.outcome = outcome;
  return f;
}

Report build(const std::vector<FakeVerdict>& fakes, const std::string& protocol = "") {
  std::vector<VerdictRecord> records;
  for (const auto& f : fakes) records.push_back(make_record(f));
  return build_report(std::move(records), ReportOptions{protocol, "test.db"});
}

const Aggregate& overall(const Report& r, const std::string& run = "model-a") {
  for (const auto& a : r.overall)
    if (a.run == run) return a;
  throw std::runtime_error("no aggregate for " + run);
}

TEST(Geomean, KnownValues) {
  EXPECT_DOUBLE_EQ(*geomean({1.0, 4.0}), 2.0);
  EXPECT_NEAR(*geomean({2.0, 8.0, 0.5}), 2.0, 1e-12);
  EXPECT_NEAR(*geomean({3.0}), 3.0, 1e-12);
  EXPECT_FALSE(geomean({}).has_value());
  EXPECT_NEAR(*geomean({4.0, 0.0, -1.0}), 4.0, 1e-12) << "non-positive values are skipped";
}

TEST(Aggregates, BestOfKTakesTheFastestCorrectSample) {
  auto r = build({failed(1, Outcome::incorrect, 0), correct(1, 1.5, 1), correct(1, 3.0, 2), failed(1, Outcome::compile_error, 3)});
  ASSERT_EQ(r.problems.size(), 1u);
  const auto& p = r.problems[0];
  EXPECT_EQ(p.samples, 4);
  EXPECT_EQ(p.correct_samples, 2);
  EXPECT_EQ(p.compiled_samples, 3);
  EXPECT_TRUE(p.correct);
  ASSERT_TRUE(p.speedup);
  EXPECT_DOUBLE_EQ(*p.speedup, 3.0);
  EXPECT_EQ(r.best(p).sample.sample_id, 2);
  EXPECT_DOUBLE_EQ(*overall(r).correct_speedup, 3.0);
  EXPECT_DOUBLE_EQ(overall(r).correctness_rate, 1.0);
}

TEST(Aggregates, FailedProblemShowsTheFailureThatGotFurthest) {
  auto r = build({failed(1, Outcome::compile_error, 0), failed(1, Outcome::runtime_error, 1), failed(1, Outcome::incorrect, 2)});
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.best(r.problems[0]).verdict.outcome, Outcome::incorrect);
  EXPECT_FALSE(r.problems[0].speedup.has_value());
}

TEST(Aggregates, FastPIsStrictlyGreaterAndFast0IsCorrectness) {
  auto r = build({correct(1, 0.5), correct(2, 0.8), correct(3, 1.0), correct(4, 1.5), correct(5, 2.0),
                  failed(6, Outcome::incorrect)});
  const auto& a = overall(r);
  EXPECT_EQ(a.problems, 6);
  EXPECT_DOUBLE_EQ(*a.fast(0), 5.0 / 6);
  EXPECT_DOUBLE_EQ(*a.fast(0), a.correctness_rate);
  EXPECT_DOUBLE_EQ(*a.fast(0.5), 4.0 / 6) << "0.5 is not > 0.5";
  EXPECT_DOUBLE_EQ(*a.fast(0.8), 3.0 / 6);
  EXPECT_DOUBLE_EQ(*a.fast(1), 2.0 / 6) << "exactly 1.0x is not faster";
  EXPECT_DOUBLE_EQ(*a.fast(1.5), 1.0 / 6);
  EXPECT_DOUBLE_EQ(*a.fast(2), 0.0);
  EXPECT_EQ(a.fast_p.size(), kFastPThresholds.size());
}

TEST(Aggregates, ASpeedupOnTheTimersFloorIsNeverFastAndNoFigure) {
  std::vector<VerdictRecord> records;
  for (const auto& f : {correct(1, 30.0), correct(2, 2.0)}) records.push_back(make_record(f));
  records[0].verdict.timing->floor_samples = 2;  // half of its 4 samples: the floor rule
  const Report r = build_report(std::move(records), ReportOptions{"", "test.db"});
  const auto& a = overall(r);
  EXPECT_DOUBLE_EQ(*a.fast(0), 1.0) << "still correct";
  EXPECT_DOUBLE_EQ(*a.fast(1), 0.5) << "only problem 2 is fast";
  EXPECT_DOUBLE_EQ(*a.fast(0.5), 0.5) << "a floor's speedup is no figure at any threshold";
  EXPECT_NEAR(*a.correct_speedup, 2.0, 1e-12) << "left out of the average";
  // One sample below half is still a figure.
  std::vector<VerdictRecord> one;
  one.push_back(make_record(correct(1, 30.0)));
  one[0].verdict.timing->floor_samples = 1;
  EXPECT_DOUBLE_EQ(*overall(build_report(std::move(one), ReportOptions{"", "test.db"})).fast(1), 1.0);
}

TEST(Aggregates, ACpuTimingOnAContendedHostIsNeverFastAndNoFigure) {
  std::vector<VerdictRecord> records;
  for (const auto& f : {correct(1, 30.0), correct(2, 2.0)}) records.push_back(make_record(f));
  records[0].verdict.timing->clock = "cpu_steady_clock";
  records[0].verdict.timing->cpu_wait_share = 0.4;  // the judge's threads waited 40% of the baselines' time
  const Report r = build_report(std::move(records), ReportOptions{"", "test.db"});
  const auto& a = overall(r);
  EXPECT_DOUBLE_EQ(*a.fast(0), 1.0) << "still correct";
  EXPECT_DOUBLE_EQ(*a.fast(1), 0.5) << "only problem 2 is fast";
  EXPECT_NEAR(*a.correct_speedup, 2.0, 1e-12) << "left out of the average";
  std::vector<VerdictRecord> calm;
  calm.push_back(make_record(correct(1, 30.0)));
  calm[0].verdict.timing->clock = "cpu_steady_clock";
  calm[0].verdict.timing->cpu_wait_share = 0.02;  // an idle host's reading: a figure
  EXPECT_DOUBLE_EQ(*overall(build_report(std::move(calm), ReportOptions{"", "test.db"})).fast(1), 1.0);
  std::vector<VerdictRecord> unread;
  unread.push_back(make_record(correct(1, 30.0)));
  unread[0].verdict.timing->clock = "cpu_steady_clock";  // no share: never read, so unknown
  EXPECT_DOUBLE_EQ(*overall(build_report(std::move(unread), ReportOptions{"", "test.db"})).fast(1), 0.0);
}

TEST(Aggregates, CorrectSpeedupIsGeomeanOverCorrectProblemsOnly) {
  auto r = build({correct(1, 2.0), correct(2, 8.0), failed(3, Outcome::incorrect), failed(4, Outcome::compile_error)});
  const auto& a = overall(r);
  EXPECT_NEAR(*a.correct_speedup, 4.0, 1e-12);
  EXPECT_DOUBLE_EQ(a.correctness_rate, 0.5);
  EXPECT_DOUBLE_EQ(a.compile_rate, 0.75);
  EXPECT_EQ(r.baseline, "eager_tf32_on") << "verified's headline baseline";
}

TEST(Aggregates, CompileRateCountsBuildStageTimeoutsAsNotCompiled) {
  auto t = failed(1, Outcome::timeout);
  t.stage = "build";
  auto t2 = failed(2, Outcome::timeout);
  t2.stage = "correctness";
  auto r = build({t, t2});
  EXPECT_DOUBLE_EQ(overall(r).compile_rate, 0.5);
}

TEST(Aggregates, MemorySharesAndEfficiency) {
  auto mem = [](int problem, std::int64_t cand, std::int64_t base) {
    auto f = correct(problem, 1.0);
    f.memory = std::make_pair(cand, base);
    return f;
  };
  auto r = build({mem(1, 50, 100), mem(2, 100, 100), mem(3, 200, 100), mem(4, 100, 50), failed(5, Outcome::incorrect)});
  const auto& a = overall(r);
  EXPECT_EQ(a.memory_measured, 4);
  EXPECT_DOUBLE_EQ(*a.memory_efficient_share, 0.25);
  EXPECT_DOUBLE_EQ(*a.memory_increase_share, 0.5);
  EXPECT_NEAR(*a.memory_efficiency, std::pow(2.0 * 1.0 * 0.5 * 0.5, 0.25), 1e-12);
}

TEST(Aggregates, MemoryCountsWhatTheModelHoldsBetweenCalls) {
  // A lower peak does not make a candidate lean if it keeps W^T and a scratch buffer around.
  auto f = correct(1, 1.1);
  f.memory = std::make_pair(64, 128);
  f.held = {192, 64};
  auto r = build({f});
  const auto& a = overall(r);
  EXPECT_DOUBLE_EQ(*a.memory_efficiency, 192.0 / 256.0);
  EXPECT_DOUBLE_EQ(*a.memory_increase_share, 1.0);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(*r.problems[0].candidate_memory_bytes, 256);
}

TEST(Aggregates, EvaluationCostSumsStageTimeByGroupPerRun) {
  auto a = correct(1, 2.0);
  a.stage_seconds = {{"start", 0.5}, {"python", 1.5}, {"correctness", 1.0}, {"audit", 0.5}, {"timing", 1.0}};
  auto b = correct(2, 2.0);
  b.protocol = "strict";
  b.stage_seconds = {{"start", 0.5}, {"build", 2.5}, {"timing", 0.5}};
  auto other = correct(1, 1.0, 0, "model-b");
  auto r = build({a, b, other});
  ASSERT_EQ(r.costs.size(), 2u);
  const auto& c = r.costs[0];
  EXPECT_EQ(c.run, "model-a");
  EXPECT_EQ(c.evaluations, 2) << "every protocol counts";
  EXPECT_DOUBLE_EQ(c.worker_seconds, 8.0);
  EXPECT_DOUBLE_EQ(c.group_seconds.at("startup"), 2.5);
  EXPECT_DOUBLE_EQ(c.group_seconds.at("correctness"), 1.5);
  EXPECT_DOUBLE_EQ(c.group_seconds.at("build"), 2.5);
  EXPECT_DOUBLE_EQ(c.group_seconds.at("timing"), 1.5);
  EXPECT_EQ(r.costs[1].evaluations, 1);
  EXPECT_TRUE(r.costs[1].group_seconds.empty()) << "a verdict without stage_seconds adds no stage time";
}

TEST(Aggregates, MemoryIsNotAvailableWithoutMeasurements) {
  auto f = correct(1, 1.2);
  f.protocol = "standard";
  auto r = build({f});
  EXPECT_FALSE(overall(r).memory_efficiency.has_value());
  EXPECT_FALSE(overall(r).memory_efficient_share.has_value());
  EXPECT_EQ(r.baseline, "eager_tf32_off");
  EXPECT_DOUBLE_EQ(*overall(r).correct_speedup, 4.8) << "standard's speedup is vs TF32 off";
}

TEST(Aggregates, DegenerateProblemIsExcludedEverywhereAndListed) {
  auto deg = correct(2, 100.0, 0, "model-b");
  deg.flags = {{"degenerate", "reference output is constant"}};
  auto r = build({correct(1, 2.0), correct(2, 50.0), deg, correct(1, 1.0, 0, "model-b")});
  ASSERT_EQ(r.excluded.size(), 1u);
  EXPECT_EQ(r.excluded[0].problem_id, 2);
  EXPECT_EQ(r.excluded[0].kind, "degenerate");
  EXPECT_EQ(r.excluded[0].reason, "reference output is constant");
  EXPECT_EQ(overall(r, "model-a").problems, 1) << "excluded for every run, not only the one that flagged it";
  EXPECT_DOUBLE_EQ(*overall(r, "model-a").correct_speedup, 2.0);
  EXPECT_EQ(overall(r, "model-b").problems, 1);
  for (const auto& p : r.problems) EXPECT_NE(p.problem_id, 2);
}

// ReLU-like: degenerate under standard's and verified's draws, not under strict's. It must stay
// in the aggregates (that is where the shape shortcut's inflation shows) with a note.
TEST(Aggregates, DegenerateOnlyUnderWeakerProtocolsIsKeptWithANote) {
  auto std_deg = correct(2, 100.0);
  std_deg.protocol = "standard";
  std_deg.flags = {{"degenerate", "the input passes every trial"}};
  auto strict_ok = correct(2, 1.0);
  strict_ok.protocol = "strict";
  auto other = correct(1, 2.0);
  other.protocol = "strict";
  auto r = build({std_deg, strict_ok, other}, "strict");
  EXPECT_TRUE(r.excluded.empty());
  bool noted = false;
  for (const auto& n : r.notes) noted |= n.find("degenerate under standard") != std::string::npos;
  EXPECT_TRUE(noted);
  EXPECT_EQ(overall(r).problems, 2);

  auto strict_deg = strict_ok;
  strict_deg.flags = {{"degenerate", "zeros pass everything"}};
  auto excluded = build({std_deg, strict_deg, other}, "strict");
  ASSERT_EQ(excluded.excluded.size(), 1u);
  EXPECT_EQ(excluded.excluded[0].reason, "zeros pass everything") << "strict's evidence is the one shown";
}

TEST(Aggregates, OneCandidatesProblemErrorDoesNotRemoveTheProblemForEveryone) {
  // A candidate that makes its own evaluation fail on the problem's side (holding the device's
  // memory while the judge draws inputs) must not drop the problem from everyone's figures.
  auto r = build({correct(3, 2.0, 0, "model-a"), failed(3, Outcome::problem_error, 0, "model-b")});
  EXPECT_TRUE(r.excluded.empty());
}

TEST(Aggregates, ProblemErrorIsExcludedAndSkippedSamplesAreNotCounted) {
  auto broken = failed(3, Outcome::problem_error);
  auto skipped = failed(4, Outcome::skipped);
  auto r = build({correct(1, 2.0), broken, skipped, failed(1, Outcome::skipped, 1)});
  ASSERT_EQ(r.excluded.size(), 1u);
  EXPECT_EQ(r.excluded[0].kind, "problem_error");
  EXPECT_EQ(overall(r).problems, 1);
  EXPECT_EQ(overall(r).samples, 1);
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes.back().find("skipped"), std::string::npos);
}

TEST(Aggregates, FlagsAreCountedPerSampleByName) {
  auto a = failed(1, Outcome::incorrect, 0);
  a.protocol = "strict";
  a.flags = {{"unsynchronized_work", "work on stream 7"}, {"result_reuse", "output cached"}};
  auto b = failed(1, Outcome::incorrect, 1);
  b.protocol = "strict";
  b.flags = {{"unsynchronized_work", ""}};
  auto r = build({a, b});
  EXPECT_EQ(overall(r).flag_counts.at("unsynchronized_work"), 2);
  EXPECT_EQ(overall(r).flag_counts.at("result_reuse"), 1);
}

TEST(Aggregates, PerLevelAndOverall) {
  auto l2 = correct(1, 4.0);
  l2.level = 2;
  auto r = build({correct(1, 1.0), l2});
  ASSERT_EQ(r.per_level.size(), 2u);
  EXPECT_EQ(r.per_level[0].level, 1);
  EXPECT_DOUBLE_EQ(*r.per_level[0].correct_speedup, 1.0);
  EXPECT_DOUBLE_EQ(*r.per_level[1].correct_speedup, 4.0);
  EXPECT_DOUBLE_EQ(*overall(r).correct_speedup, 2.0);
  EXPECT_EQ(overall(r).level, 0);
}

TEST(Aggregates, HeadlineIsTheStrictestProtocolUnlessAsked) {
  auto s = correct(1, 1.0);
  s.protocol = "standard";
  auto v = correct(1, 1.0);
  auto r = build({s, v});
  EXPECT_EQ(r.protocol, "verified");
  EXPECT_EQ(r.protocols, (std::vector<std::string>{"verified", "standard"}));
  EXPECT_EQ(build({s, v}, "standard").protocol, "standard");
  EXPECT_THROW(build({s, v}, "strict"), UsageError);
}

TEST(Aggregates, MixedPrecisionsAreSeparateRuns) {
  auto a = correct(1, 1.0);
  auto b = correct(1, 2.0);
  b.precision = "bf16";
  auto r = build({a, b});
  EXPECT_EQ(r.runs, (std::vector<std::string>{"model-a [bf16]", "model-a [fp32]"}));
  EXPECT_EQ(r.overall.size(), 2u);
}

TEST(Decomposition, EachProtocolChoiceIsScoredOnTheSameProblems) {
  // Problem 1: honest, 1.2x vs TF32 on, 4.8x vs TF32 off. Problem 2: passes standard, fails
  // the hidden inputs. Problem 3: only under standard (left out of the comparison).
  std::vector<FakeVerdict> fakes;
  for (const char* proto : {"standard", "verified", "strict"}) {
    auto p1 = correct(1, 1.2);
    p1.protocol = proto;
    fakes.push_back(p1);
    auto p2 = std::string(proto) == "standard" ? correct(2, 0.9) : failed(2, Outcome::incorrect);
    p2.protocol = proto;
    fakes.push_back(p2);
  }
  auto p3 = correct(3, 3.0);
  p3.protocol = "standard";
  fakes.push_back(p3);
  auto r = build(fakes);
  ASSERT_EQ(r.scorings.size(), 5u);
  ASSERT_EQ(r.decomposition.size(), 1u);
  const auto& row = r.decomposition[0];
  EXPECT_EQ(row.problems, 2);
  std::map<std::string, const DecompositionCell*> cell;
  for (const auto& c : row.cells) cell[c.scoring] = &c;
  const auto& standard = *cell.at("standard")->scores;
  EXPECT_DOUBLE_EQ(standard.correctness_rate, 1.0);
  EXPECT_NEAR(*standard.correct_speedup, std::sqrt(4.8 * 3.6), 1e-9);
  EXPECT_DOUBLE_EQ(*standard.fast(1.0), 1.0);
  const auto& tf32 = *cell.at("standard+TF32 baseline")->scores;
  EXPECT_NEAR(*tf32.correct_speedup, std::sqrt(1.2 * 0.9), 1e-9);
  EXPECT_DOUBLE_EQ(*tf32.fast(1.0), 0.5);
  EXPECT_DOUBLE_EQ(*cell.at("standard+TF32 baseline")->moved, 0.5);
  const auto& hidden = *cell.at("standard+hidden inputs")->scores;
  EXPECT_DOUBLE_EQ(hidden.correctness_rate, 0.5);
  EXPECT_NEAR(*hidden.correct_speedup, 4.8, 1e-9);
  const auto& verified = *cell.at("verified")->scores;
  EXPECT_NEAR(*verified.correct_speedup, 1.2, 1e-9);
  EXPECT_DOUBLE_EQ(*verified.fast(1.0), 0.5);
  EXPECT_DOUBLE_EQ(*cell.at("verified")->moved, 0.5);
  EXPECT_FALSE(cell.at("standard")->moved.has_value()) << "standard is the reference";
}

TEST(Decomposition, ScoringsFollowTheProtocolsPresent) {
  auto r = build({correct(1, 1.0)});
  std::vector<std::string> names;
  for (const auto& s : r.scorings) names.push_back(s.name);
  EXPECT_EQ(names, (std::vector<std::string>{"standard+hidden inputs", "verified"}));
}

TEST(Aggregates, OlderProtocolVersionsAreLeftOutWithANote) {
  auto a = make_record(correct(1, 1.0));
  auto b = make_record(correct(1, 9.0, 1));
  b.verdict.protocol_version = 0;
  std::vector<VerdictRecord> records{a, b};
  auto r = build_report(records, {});
  EXPECT_EQ(overall(r).samples, 1);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("older version"), std::string::npos);
}

TEST(Aggregates, EmptyInputGivesAnEmptyReport) {
  auto r = build({});
  EXPECT_TRUE(r.protocol.empty());
  EXPECT_TRUE(r.overall.empty());
}

TEST(Aggregates, FastPIsNotAvailableWhenACorrectProblemWasNotTimed) {
  // The CPU demo: correct, but the baseline was not timed, so no speedup.
  FakeVerdict untimed = correct(1, 1.0);
  untimed.speedup_on.reset();
  untimed.speedup_off.reset();
  auto r = build({untimed, failed(2, Outcome::incorrect)});
  const auto& a = overall(r);
  EXPECT_DOUBLE_EQ(*a.fast(0), 0.5) << "fast_0 is correctness: known";
  for (double p : {0.5, 0.8, 1.0, 1.5, 2.0}) EXPECT_FALSE(a.fast(p).has_value()) << "fast_" << p << " cannot be 0%";
  auto none_correct = build({failed(1, Outcome::incorrect)});
  EXPECT_DOUBLE_EQ(*overall(none_correct).fast(1.0), 0.0) << "nothing correct: nothing fast, known";
}

TEST(Decomposition, MovedIsNotAvailableWhenFast1IsUnknownOnEitherSide) {
  // Timed against TF32 off only (as on the CPU): the TF32-on scoring has no speedup at all.
  std::vector<FakeVerdict> fakes;
  for (int p = 1; p <= 2; ++p) {
    auto f = correct(p, 1.0);
    f.speedup_on.reset();
    f.speedup_off = 2.0;
    f.protocol = "standard";
    fakes.push_back(f);
  }
  auto r = build(fakes);
  ASSERT_EQ(r.decomposition.size(), 1u);
  std::map<std::string, const DecompositionCell*> cell;
  for (const auto& c : r.decomposition[0].cells) cell[c.scoring] = &c;
  EXPECT_DOUBLE_EQ(*cell.at("standard")->scores->fast(1.0), 1.0);
  EXPECT_FALSE(cell.at("standard+TF32 baseline")->scores->fast(1.0).has_value());
  EXPECT_FALSE(cell.at("standard+TF32 baseline")->moved.has_value()) << "not 100%: unknown";
}

TEST(Aggregates, InternalErrorsCountNowhereAndAreListed) {
  auto r = build({correct(1, 2.0, 0), failed(1, Outcome::internal_error, 1), failed(2, Outcome::internal_error, 0)});
  const auto& a = overall(r);
  EXPECT_EQ(a.problems, 1) << "problem 2 has only kbv's own failure: not scored";
  EXPECT_EQ(a.samples, 1);
  EXPECT_DOUBLE_EQ(a.correctness_rate, 1.0);
  ASSERT_EQ(r.internal_errors.size(), 2u);
  EXPECT_EQ(r.best(r.problems[0]).verdict.outcome, Outcome::correct);
  bool noted = false;
  for (const auto& n : r.notes) noted |= n.find("internal errors") != std::string::npos;
  EXPECT_TRUE(noted);
  for (const auto& c : r.costs) EXPECT_EQ(c.evaluations, 3) << "they did cost worker time";
}

}  // namespace
}  // namespace kbv
