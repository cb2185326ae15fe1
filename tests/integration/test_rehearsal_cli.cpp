// The real judge on the CPU with its rehearsal (judge/rehearsal.hpp) forced on and off: the
// verdicts are the same to the last error figure, the rehearsal ran to its end when on and not at
// all when off; and either way the judge says the device is free only after its verdicts.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/job.hpp"
#include "kbv_cli.hpp"

namespace kbv {
namespace {

namespace fs = std::filesystem;
using testing::fixture;

struct Judged {
  testing::JudgeVerdicts result;
  std::string profile;  // every judge-<pid>.profile line
};

Judged judge_with_rehearsal(const std::string& mode) {
  fs::path root = fs::temp_directory_path() / ("kbv-rehearsal-cli-" + std::to_string(::getpid()) + "-" + mode);
  fs::remove_all(root);
  fs::create_directories(root / "profile");
  WorkerJob job;
  job.problem_path = fixture("linear_bn_problem.py");
  job.candidate_path = fixture("linear_bn_torch.py");
  job.protocols = {"strict", "verified", "standard"};
  job.protocol = job.protocols.front();
  job.device = "cpu";
  job.timing.budget_seconds = 0.3;
  job.timing.warmup_seconds = 0.05;
  job.build_root = (root / "builds").string();
  Judged j;
  j.result = testing::run_judge_job(job, std::chrono::minutes(5),
                                    {{"KBV_JUDGE_REHEARSAL", mode}, {"KBV_JUDGE_PROFILE", (root / "profile").string()}});
  for (const auto& f : fs::directory_iterator(root / "profile")) {
    std::ifstream in(f.path());
    j.profile += std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  fs::remove_all(root);
  return j;
}

// What a verdict says about correctness, timing aside.
nlohmann::json correctness_of(const nlohmann::json& v) {
  nlohmann::json out = {{"outcome", v.value("outcome", "")}, {"flags", v.value("flags", nlohmann::json::array())}};
  for (const auto& d : v["correctness"]["distributions"])
    out["distributions"].push_back({d.value("name", ""), d.value("status", ""), d.value("max_abs_err", -1.0),
                                    d.value("max_rel_err", -1.0), d.value("trivial_pass", "")});
  return out;
}

TEST(JudgeRehearsal, LeavesEveryVerdictAsItWasAndRunsToItsEnd) {
  Judged on = judge_with_rehearsal("on"), off = judge_with_rehearsal("off");
  const std::string context = on.result.process.describe() + "\n" + on.result.process.output_tail;
  ASSERT_EQ(on.result.verdicts.size(), 3u) << context;
  ASSERT_EQ(off.result.verdicts.size(), 3u) << off.result.process.output_tail;
  for (const auto& [protocol, v] : on.result.verdicts) {
    EXPECT_EQ(v.value("outcome", ""), "correct") << protocol << "\n" << v.dump(1).substr(0, 3000);
    EXPECT_EQ(correctness_of(v), correctness_of(off.result.verdicts[protocol])) << protocol;
  }
  EXPECT_NE(on.profile.find("shared.rehearsal\t"), std::string::npos) << on.profile;
  EXPECT_EQ(on.profile.find("shared.rehearsal_stopped"), std::string::npos) << "the rehearsal stopped:\n" << on.profile;
  EXPECT_NE(on.profile.find("rehearsal.checks"), std::string::npos) << on.profile;
  EXPECT_EQ(off.profile.find("rehearsal"), std::string::npos) << off.profile;
}

// The rehearsal runs while the sandbox imports the candidate, but its time is the judge's: here
// it takes 4 s against a 3 s build limit, and the candidate's (instant) import is not a timeout.
TEST(JudgeRehearsal, ItsTimeIsNotTheCandidatesBuildTime) {
  fs::path root = fs::temp_directory_path() / ("kbv-rehearsal-slow-" + std::to_string(::getpid()));
  fs::remove_all(root);
  WorkerJob job;
  job.problem_path = fixture("slow_rehearsal_problem.py");
  job.candidate_path = fixture("swish_torch.py");
  job.protocols = {"standard"};
  job.protocol = "standard";
  job.device = "cpu";
  job.compile_timeout_seconds = 3;
  job.timing.enabled = false;
  job.build_root = (root / "builds").string();
  auto r = testing::run_judge_job(job, std::chrono::minutes(3), {{"KBV_JUDGE_REHEARSAL", "on"}});
  fs::remove_all(root);
  ASSERT_EQ(r.verdicts.count("standard"), 1u) << r.process.output_tail;
  EXPECT_EQ(r.verdicts["standard"].value("outcome", ""), "correct") << r.verdicts["standard"].dump(1).substr(0, 3000);
}

TEST(JudgeRelease, SaysTheDeviceIsFreeOnlyAfterItsVerdicts) {
  Judged j = judge_with_rehearsal("off");
  ASSERT_EQ(j.result.verdicts.size(), 3u) << j.result.process.output_tail;
  EXPECT_EQ(j.result.verdicts_before_released, 3) << "released before its verdicts, or never";
  EXPECT_TRUE(j.result.process.exited && j.result.process.exit_code == 0) << j.result.process.describe();
}

// A build-only judge (kbv run's build phase) never starts its interpreter: letting go of its
// device memory must not touch Python, and it exits as cleanly as the others.
TEST(JudgeRelease, ABuildOnlyJudgeLetsGoWithoutPythonAndExitsCleanly) {
  fs::path root = fs::temp_directory_path() / ("kbv-release-build-" + std::to_string(::getpid()));
  fs::remove_all(root);
  WorkerJob job;
  job.problem_path = testing::example_problem("7_Swish.py");
  job.candidate_path = fixture("swish_torch.py");
  job.protocol = "standard";
  job.device = "cpu";
  job.build_only = true;
  job.build_root = (root / "builds").string();
  auto r = testing::run_judge_job(job, std::chrono::minutes(3));
  fs::remove_all(root);
  ASSERT_EQ(r.verdicts.size(), 1u) << r.process.output_tail;
  EXPECT_TRUE(r.process.exited && r.process.exit_code == 0) << r.process.describe() << "\n" << r.process.output_tail;
  EXPECT_EQ(r.verdicts_before_released, 1) << "no word that the device is free";
}

}  // namespace
}  // namespace kbv
