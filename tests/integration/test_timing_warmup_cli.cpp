// Warm-up ends once the first samples prove stable (judge/timing_rules.hpp), not after a fixed
// time: the real judge on the CPU with a warm-up limit far above what an evaluation needs.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "core/job.hpp"
#include "kbv_cli.hpp"

namespace kbv {
namespace {

using testing::fixture;

TEST(TimingWarmup, EndsOnceTheSamplesAreStableNotAtItsLimit) {
  namespace fs = std::filesystem;
  fs::path root = fs::temp_directory_path() / ("kbv-warmup-" + std::to_string(::getpid()));
  fs::remove_all(root);
  WorkerJob job;
  job.problem_path = testing::example_problem("7_Swish.py");
  job.candidate_path = fixture("swish_torch.py");
  job.protocols = {"standard"};
  job.protocol = "standard";
  job.device = "cpu";
  job.size = "small";
  job.timing.warmup_seconds = 90;  // the limit: a warm-up that ran to it fails the bound below
  job.timing.budget_seconds = 1;
  job.build_root = (root / "builds").string();
  ProcessSpec spec;
  spec.argv = {testing::kBin + "/kbv-judge"};
  spec.stdin_data = nlohmann::json(job).dump();
  nlohmann::json verdict;
  const auto start = Clock::now();
  auto r = run_process(spec, Clock::now() + std::chrono::minutes(5), [&](const std::string& line) -> std::optional<Clock::time_point> {
    auto m = nlohmann::json::parse(line, nullptr, false);
    if (m.is_object() && m.value("event", "") == "verdict") verdict = m["verdict"];
    return std::nullopt;
  });
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const std::string context = r.describe() + "\n" + r.output_tail + "\n" + verdict.dump(1).substr(0, 4000);
  ASSERT_EQ(verdict.value("outcome", ""), "correct") << context;
  const int warm_rounds = verdict["timing"].value("warmup_rounds", 0);
  EXPECT_GE(warm_rounds, 3) << context;
  // Here a round takes about a millisecond: without the rule the warm-up runs to its cap of 1000
  // rounds (or to its limit, 90 s).
  EXPECT_LT(warm_rounds, 500) << context;
  std::cout << "warm-up rounds: " << warm_rounds << "\n";
  EXPECT_LT(seconds, 60) << "the warm-up ran to its limit (" << warm_rounds << " rounds)\n" << context;
  if (!::testing::Test::HasFailure()) fs::remove_all(root);
}

}  // namespace
}  // namespace kbv
