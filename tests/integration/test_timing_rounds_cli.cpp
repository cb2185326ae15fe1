// The timing rounds, through the real judge on the CPU: warm-up ends once the first samples prove
// stable (judge/timing_rules.hpp), not after a fixed time; verified takes strict's rounds.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/job.hpp"
#include "kbv_cli.hpp"

namespace kbv {
namespace {

using testing::fixture;

struct JudgeRun {
  std::map<std::string, nlohmann::json> verdicts;  // by protocol
  double seconds = 0;
  std::string context;
};

// kbv-judge on `candidate` (problem 7, small size, CPU) for `protocols`, in that order.
JudgeRun run_judge(const std::vector<std::string>& protocols, double warmup_seconds,
                   const std::string& candidate = fixture("swish_torch.py")) {
  namespace fs = std::filesystem;
  fs::path root = fs::temp_directory_path() / ("kbv-timing-rounds-" + std::to_string(::getpid()));
  fs::remove_all(root);
  WorkerJob job;
  job.problem_path = testing::example_problem("7_Swish.py");
  job.candidate_path = candidate;
  job.protocols = protocols;
  job.protocol = protocols.front();
  job.device = "cpu";
  job.size = "small";
  job.timing.warmup_seconds = warmup_seconds;
  job.timing.budget_seconds = 1;
  job.build_root = (root / "builds").string();
  JudgeRun run;
  const auto start = Clock::now();
  auto [r, verdicts, released] = testing::run_judge_job(job, std::chrono::minutes(5));
  (void)released;
  run.verdicts = std::move(verdicts);
  run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  run.context = r.describe() + "\n" + r.output_tail + "\n" + nlohmann::json(run.verdicts).dump(1).substr(0, 6000);
  fs::remove_all(root);
  return run;
}

TEST(TimingWarmup, EndsOnceTheSamplesAreStableNotAtItsLimit) {
  // The limit, 90 s: a warm-up that ran to it fails the bounds below.
  JudgeRun run = run_judge({"standard"}, 90);
  const nlohmann::json& verdict = run.verdicts["standard"];
  const double seconds = run.seconds;
  const std::string& context = run.context;
  ASSERT_EQ(verdict.value("outcome", ""), "correct") << context;
  const int warm_rounds = verdict["timing"].value("warmup_rounds", 0);
  EXPECT_GE(warm_rounds, 3) << context;
  // Here a round takes about a millisecond: without the rule the warm-up runs to its cap of 1000
  // rounds (or to its limit, 90 s).
  EXPECT_LT(warm_rounds, 500) << context;
  std::cout << "warm-up rounds: " << warm_rounds << "\n";
  EXPECT_LT(seconds, 60) << "the warm-up ran to its limit (" << warm_rounds << " rounds)\n" << context;
}

// Verified times the same candidate setting (TF32 on) against the same headline baseline as
// strict, whose every timed call is under strict's checks: it takes strict's rounds rather than
// time them again. Standard's candidate runs with TF32 off: its rounds are its own.
TEST(TimingRounds, VerifiedTakesStrictsRoundsStandardTimesItsOwn) {
  JudgeRun run = run_judge({"strict", "verified", "standard"}, 0.2);
  ASSERT_EQ(run.verdicts.size(), 3u) << run.context;
  for (const auto& [name, v] : run.verdicts) ASSERT_EQ(v.value("outcome", ""), "correct") << name << "\n" << run.context;
  const nlohmann::json& strict = run.verdicts["strict"]["timing"];
  const nlohmann::json& verified = run.verdicts["verified"]["timing"];
  const nlohmann::json& standard = run.verdicts["standard"]["timing"];
  EXPECT_EQ(verified.value("rounds_of", ""), "strict") << run.context;
  EXPECT_FALSE(strict.contains("rounds_of")) << run.context;
  EXPECT_FALSE(standard.contains("rounds_of")) << run.context;
  EXPECT_EQ(verified["series"], strict["series"]) << run.context;
  EXPECT_EQ(verified["speedups"], strict["speedups"]) << run.context;
  EXPECT_NE(standard["series"], strict["series"]) << run.context;
}

// Verified's own ModelNew is not let off because its rounds are strict's: a candidate honest in
// its first ModelNew (strict's) and stale in later ones after their correctness calls meets 8
// checked calls on fresh inputs in verified (red-team, session 15). Verified's memory figure from
// the driver was strict's ModelNew's: it is left out.
TEST(TimingRounds, VerifiedsOwnModelStillMeetsCheckedCallsOnFreshInputs) {
  JudgeRun run = run_judge({"strict", "verified", "standard"}, 0.2,
                           testing::kSource + "/examples/hacks/honest_only_in_its_first_model.py");
  ASSERT_EQ(run.verdicts.size(), 3u) << run.context;
  EXPECT_EQ(run.verdicts["strict"].value("outcome", ""), "correct") << run.context;
  EXPECT_EQ(run.verdicts["verified"].value("outcome", ""), "incorrect") << run.context;
  EXPECT_NE(run.verdicts["verified"].value("reason", "").find("fresh"), std::string::npos) << run.context;
  EXPECT_EQ(run.verdicts["standard"].value("outcome", ""), "incorrect") << run.context;
}

// Without strict before it, verified times its own rounds.
TEST(TimingRounds, VerifiedBeforeStrictTimesItsOwn) {
  JudgeRun run = run_judge({"verified", "strict"}, 0.2);
  ASSERT_EQ(run.verdicts.size(), 2u) << run.context;
  EXPECT_FALSE(run.verdicts["verified"]["timing"].contains("rounds_of")) << run.context;
  EXPECT_GT(run.verdicts["verified"]["timing"].value("rounds", 0), 0) << run.context;
  EXPECT_NE(run.verdicts["verified"]["timing"]["series"], run.verdicts["strict"]["timing"]["series"]) << run.context;
}

}  // namespace
}  // namespace kbv
