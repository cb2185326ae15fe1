// The judge's watchdog, end to end on the CPU: a judge held in a call of its own after the
// candidate's process ended reports and exits about the watchdog's grace later. On the H200 the
// judge is held so inside the driver (its kernel launch after an illegal address in the
// candidate's context, which never returned); here a slow reference stands in for that call.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "core/job.hpp"
#include "kbv_cli.hpp"

namespace kbv {
namespace {

using testing::fixture;
using testing::run_kbv_eval;

TEST(JudgeWatchdog, AJudgeHeldAfterTheCandidateEndedReportsWithoutWaitingOut) {
  const auto start = Clock::now();
  auto r = run_kbv_eval({fixture("held_judge/1_SlowReference.py"), fixture("held_judge/ends_its_process_soon.py"),
                         "--protocol", "standard", "--no-timing"},
                        "cpu", 300);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  ASSERT_EQ(r.outcome(), "crashed") << r.context();
  EXPECT_NE(r.reason().find("exited with code 14"), std::string::npos) << r.context();
  EXPECT_NE(r.reason().find("had not noticed"), std::string::npos) << "the watchdog's report\n" << r.context();
  // Start-up, build and models take a few seconds here; the reference's call alone is 40 s.
  EXPECT_LT(seconds, 36) << "the verdict waited for the judge's own call to return\n" << r.context();
}

// The judge is held in the second protocol after the first ended incorrect: its report carries
// the first protocol's verdict too, so the candidate cannot have it evaluated again.
TEST(JudgeWatchdog, AProtocolCaughtBeforeTheHoldKeepsItsVerdict) {
  namespace fs = std::filesystem;
  fs::path root = fs::temp_directory_path() / ("kbv-held-judge-" + std::to_string(::getpid()));
  fs::remove_all(root);
  WorkerJob job;
  job.problem_path = fixture("held_judge/2_SlowSecondModel.py");
  job.candidate_path = fixture("held_judge/wrong_then_ends_its_process.py");
  job.protocols = {"standard", "verified"};
  job.protocol = "standard";
  job.device = "cpu";
  job.timing.enabled = false;
  job.build_root = (root / "builds").string();
  const auto start = Clock::now();
  auto [r, verdicts, released] = testing::run_judge_job(job, std::chrono::minutes(4));
  (void)released;
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const std::string context = r.describe() + "\n" + r.output_tail + "\n" + nlohmann::json(verdicts).dump(1).substr(0, 6000);
  ASSERT_EQ(verdicts.size(), 2u) << context;
  EXPECT_EQ(verdicts["standard"].value("outcome", ""), "incorrect") << context;
  EXPECT_EQ(verdicts["verified"].value("outcome", ""), "crashed") << context;
  EXPECT_NE(verdicts["verified"].value("reason", "").find("had not noticed"), std::string::npos) << context;
  EXPECT_LT(seconds, 45) << "the verdicts waited for the judge's own call\n" << context;
  if (!::testing::Test::HasFailure()) fs::remove_all(root);
}

}  // namespace
}  // namespace kbv
