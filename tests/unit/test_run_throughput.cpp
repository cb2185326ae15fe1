// Stage timing on the orchestrator's side and the run's time summary.
#include <gtest/gtest.h>

#include "orchestrate/judge_transcript.hpp"
#include "orchestrate/run_throughput.hpp"
#include "orchestrate/stage_clock.hpp"

namespace kbv {
namespace {

using std::chrono::milliseconds;

TEST(StageClock, AttributesTimeToTheStageThatWasRunning) {
  auto t0 = StageClock::Clock::time_point{};
  StageClock clock(t0);
  clock.enter("build", t0 + milliseconds(3000));
  clock.enter("correctness", t0 + milliseconds(3500));
  clock.enter("build", t0 + milliseconds(4000));  // entered twice: adds up
  auto seconds = clock.finish(t0 + milliseconds(4250));
  EXPECT_DOUBLE_EQ(seconds["start"], 3.0);
  EXPECT_DOUBLE_EQ(seconds["build"], 0.75);
  EXPECT_DOUBLE_EQ(seconds["correctness"], 0.5);
  EXPECT_EQ(seconds.size(), 3u);
}

// One judge serving several protocols: what came before a protocol's start was the previous
// one's; the stage running then goes on into the next.
TEST(StageClock, TakeHandsOutTheStagesSoFarAndGoesOn) {
  auto t0 = StageClock::Clock::time_point{};
  StageClock clock(t0);
  clock.enter("build", t0 + milliseconds(1000));
  clock.enter("timing", t0 + milliseconds(1500));
  auto first = clock.take(t0 + milliseconds(2500));
  EXPECT_DOUBLE_EQ(first["start"], 1.0);
  EXPECT_DOUBLE_EQ(first["build"], 0.5);
  EXPECT_DOUBLE_EQ(first["timing"], 1.0);
  clock.enter("correctness", t0 + milliseconds(2750));
  auto second = clock.finish(t0 + milliseconds(3000));
  EXPECT_DOUBLE_EQ(second["timing"], 0.25);
  EXPECT_DOUBLE_EQ(second["correctness"], 0.25);
  EXPECT_EQ(second.size(), 2u);
}

// A judge started ahead: its start-up counts as done ahead only until its gate opened; what the
// device waited for after that is ordinary start-up.
TEST(StageClock, StartUpAfterTheGateOpenedIsNotAhead) {
  auto t0 = StageClock::Clock::time_point{};
  StageClock clock(t0);
  clock.enter("python", t0 + milliseconds(500));
  clock.enter("waiting", t0 + milliseconds(4000));
  double ahead = clock.fold_ahead("ahead", 3.0, "setup", t0 + milliseconds(4100));  // the gate opened at 3 s
  EXPECT_DOUBLE_EQ(ahead, 3.0);
  auto seconds = clock.finish(t0 + milliseconds(5100));
  EXPECT_DOUBLE_EQ(seconds["ahead"], 3.0);
  EXPECT_DOUBLE_EQ(seconds["start"], 1.1);
  EXPECT_DOUBLE_EQ(seconds["setup"], 1.0);
  EXPECT_EQ(seconds.count("python") + seconds.count("waiting"), 0u);

  StageClock open_all_along(t0);  // the gate never closed for it (the device's first turn)
  EXPECT_DOUBLE_EQ(open_all_along.fold_ahead("ahead", 0.0, "setup", t0 + milliseconds(3000)), 0.0);
  EXPECT_DOUBLE_EQ(open_all_along.finish(t0 + milliseconds(3000))["start"], 3.0);

  RunThroughput t;
  Verdict eval;
  eval.stage_seconds = {{"ahead", 3.0}, {"start", 1.1}, {"timing", 1.0}};
  t.add_evaluation(eval);
  EXPECT_DOUBLE_EQ(t.eval_ahead_seconds, 3.0);
  EXPECT_DOUBLE_EQ(t.eval_group_seconds["startup"], 1.1) << "ahead is in no group: it cost the device nothing";
}

std::int64_t micros(StageClock::Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

// kbv may read a judge's messages late (busy with the job before, e.g. its static scan): the stages
// are timed by when the judge sent each message ("at_us"), not by when kbv read it.
TEST(JudgeTranscript, StagesAreTimedByWhenTheJudgeSentEachMessage) {
  EvaluationRun run;
  run.job.protocol = "verified";
  const auto t0 = StageClock::Clock::now() - std::chrono::seconds(5);
  JudgeTranscript transcript(run, t0, false);
  // All heard at once, now: sent 1, 1.5 and 1.75 s after the job began.
  transcript.hear({{"event", "stage"}, {"stage", "build"}, {"at_us", micros(t0 + milliseconds(1000))}});
  transcript.hear({{"event", "stage"}, {"stage", "correctness"}, {"at_us", micros(t0 + milliseconds(1500))}});
  transcript.hear({{"event", "stage"}, {"stage", "done"}, {"at_us", micros(t0 + milliseconds(1750))}});
  transcript.hear({{"event", "verdict"}, {"verdict", {{"protocol", "verified"}, {"outcome", "correct"}}}, {"at_us", micros(t0 + milliseconds(1800))}});
  auto verdicts = transcript.verdicts(std::nullopt, ProcessResult{}, "", t0 + milliseconds(2000));
  ASSERT_EQ(verdicts.size(), 1u);
  auto& s = verdicts[0].stage_seconds;
  EXPECT_NEAR(s["start"], 1.0, 1e-6);
  EXPECT_NEAR(s["build"], 0.5, 1e-6);
  EXPECT_NEAR(s["correctness"], 0.25, 1e-6);
  EXPECT_NEAR(s["done"], 0.25, 1e-6);
  // A time that cannot be the judge's (ahead of now) is taken as now, and stages never run back.
  JudgeTranscript odd(run, t0, false);
  odd.hear({{"event", "stage"}, {"stage", "build"}, {"at_us", micros(StageClock::Clock::now() + std::chrono::hours(2))}});
  odd.hear({{"event", "stage"}, {"stage", "correctness"}, {"at_us", micros(t0 + milliseconds(1))}});
  auto later = odd.verdicts(std::nullopt, ProcessResult{}, "");
  ASSERT_EQ(later.size(), 1u);
  EXPECT_GE(later[0].stage_seconds["start"], 4.9);
  EXPECT_GE(later[0].stage_seconds["build"], 0.0);
  EXPECT_GE(later[0].stage_seconds["correctness"], 0.0);
}

TEST(RunThroughput, BuildCpuIsPricedPerSource) {
  RunThroughput t;
  Verdict build;
  build.wall_seconds = 20;
  t.add_build(build, 30.0);
  t.add_build(build, 50.0);
  EXPECT_DOUBLE_EQ(t.build_cpu_seconds, 80.0);
  EXPECT_NE(t.describe().find("build CPU: 40.0 s per source"), std::string::npos) << t.describe();
  EXPECT_DOUBLE_EQ(t.to_json()["build_cpu_seconds"].get<double>(), 80.0);
}

TEST(RunThroughput, GroupsStagesAndCountsParallelBuilds) {
  EXPECT_EQ(stage_group("reuse_check"), "correctness");
  EXPECT_EQ(stage_group("models"), "correctness");
  EXPECT_EQ(stage_group("built"), "build");
  EXPECT_EQ(stage_group("load_problem"), "startup");
  EXPECT_EQ(stage_group("timing"), "timing");

  RunThroughput t;
  t.build_jobs = 4;
  Verdict build;
  build.wall_seconds = 10;
  for (int i = 0; i < 4; ++i) t.add_build(build);
  t.build_phase_seconds = 10;
  Verdict eval;
  eval.stage_seconds = {{"start", 2}, {"correctness", 1}, {"audit", 0.5}, {"timing", 3}, {"memory", 0.25}};
  t.add_evaluation(eval);
  t.add_evaluation(eval);
  t.eval_phase_seconds = 14;
  EXPECT_DOUBLE_EQ(t.eval_group_seconds["correctness"], 3.0);
  EXPECT_DOUBLE_EQ(t.eval_group_seconds["timing"], 6.0);
  std::string text = t.describe();
  EXPECT_NE(text.find("4.0x parallel"), std::string::npos) << text;
  EXPECT_NE(text.find("2 evaluations in 14.0 s wall (514 per hour"), std::string::npos) << text;
  EXPECT_EQ(t.to_json()["eval_group_seconds"]["startup"], 4.0);
}

}  // namespace
}  // namespace kbv
