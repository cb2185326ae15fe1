// What a re-run evaluates again, and what kbv stores when the worker could not say what it
// measured: a timeout under a smaller limit is evaluated again (same or smaller: kept); an
// internal_error is stored under the job's key (never cpu:::0) and evaluated again; names that
// kbv cannot use are skipped without stopping the run; a problem held twice is refused.
#include "cli_harness.hpp"
#include "db_peek.hpp"

namespace kbv {
namespace {

using testing::query;
using testing::Scratch;

TEST(ResumeLimits, TimeoutIsEvaluatedAgainOnlyUnderALargerLimit) {
  Scratch s("timeout-limits");
  s.problem(1);
  s.candidate("m", 1, 0, {"sleep=2.5"});
  auto first = s.kbv(s.run_args({"--run-timeout", "1"}));
  ASSERT_EQ(first.exit_code, 0) << first.output;
  ASSERT_EQ(query(s.db(), "SELECT outcome FROM verdicts"), std::vector<std::string>{"timeout"});
  EXPECT_EQ(query(s.db(), "SELECT json_extract(verdict_json, '$.limits.run_timeout_seconds') FROM verdicts"),
            std::vector<std::string>{"1.0"})
      << "the verdict records the limit it ran under";

  s.clear_worker_log();
  auto same = s.kbv(s.run_args({"--run-timeout", "1"}));
  EXPECT_EQ(same.exit_code, 0) << same.output;
  EXPECT_EQ(s.worker_calls("eval"), 0u) << "same limit: the timeout stands";
  auto smaller = s.kbv(s.run_args({"--run-timeout", "0.5"}));
  EXPECT_EQ(s.worker_calls("eval"), 0u) << "smaller limit: the timeout stands\n" << smaller.output;

  auto larger = s.kbv(s.run_args({"--run-timeout", "10"}));
  EXPECT_EQ(larger.exit_code, 0) << larger.output;
  EXPECT_EQ(s.worker_calls("eval"), 1u) << "larger limit: evaluated again\n" << larger.output;
  EXPECT_EQ(query(s.db(), "SELECT outcome FROM verdicts"), std::vector<std::string>{"correct"});
}

TEST(InternalError, IsStoredUnderTheJobsKeyAndEvaluatedAgain) {
  Scratch s("internal-error");
  s.problem(1);
  const std::string outcome = s.path("outcome.txt");
  s.write("outcome.txt", "internal_error");
  s.candidate("m", 1, 0, {"empty_identity=1", "outcome_file=" + outcome});
  s.candidate("m", 1, 1, {"empty_identity=1", "outcome=crashed"});  // an older worker's internal error
  auto first = s.kbv(s.run_args());
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_EQ(query(s.db(), "SELECT protocol || ' ' || device_fingerprint || ' ' || length(candidate_sha256) FROM verdicts"),
            (std::vector<std::string>{"standard cpu:Fake CPU::0 64", "standard cpu:Fake CPU::0 64"}))
      << "never stored under an empty key such as cpu:::0";
  auto report = s.kbv({"report", "--db", s.db()});
  EXPECT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("## Internal errors"), std::string::npos) << report.output;
  EXPECT_NE(report.output.find("| m | all | 1 | 1 | "), std::string::npos)
      << "one problem, one sample: the internal error counts in no figure\n"
      << report.output;

  s.write("outcome.txt", "correct");
  s.clear_worker_log();
  auto second = s.kbv(s.run_args());
  EXPECT_EQ(second.exit_code, 0) << second.output;
  const std::string sample0 = s.path("runs/m/level_1_problem_1_sample_0_kernel.py");
  EXPECT_EQ(s.worker_log(), (std::vector<std::string>{"probe", "eval " + sample0 + " standard"}))
      << "the internal error is evaluated again, the crash is the candidate's and stays";
  EXPECT_EQ(query(s.db(), "SELECT sample_id || ' ' || outcome FROM verdicts ORDER BY sample_id"),
            (std::vector<std::string>{"0 correct", "1 crashed"}));
}

TEST(RunNames, NumbersOutOfRangeAreSkippedWithAMessage) {
  Scratch s("out-of-range");
  s.problem(1);
  s.write("suite/level99999999999/1_Huge.py", "# problem\n");
  s.write("suite/level1/99999999999_Huge.py", "# problem\n");
  s.candidate("m", 1, 0);
  s.write("runs/m/level_1_problem_1_sample_99999999999_kernel.py", "# candidate\n");
  s.write("runs/m/level_99999999999_problem_1_sample_0_kernel.py", "# candidate\n");
  auto r = s.kbv(s.run_args());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char* name : {"level99999999999", "99999999999_Huge.py", "sample_99999999999", "level_99999999999"})
    EXPECT_NE(r.output.find(name), std::string::npos) << name << " is named\n" << r.output;
  EXPECT_NE(r.output.find("out of range"), std::string::npos) << r.output;
  EXPECT_EQ(s.worker_calls("eval"), 1u) << "the usable candidate is evaluated";
}

TEST(RunNames, AProblemHeldTwiceIsRefusedNamingBothFiles) {
  Scratch s("duplicate-problem");
  s.problem(19, "ReLU");
  s.write("suite/level1/019_ReLU.py", "# the same problem id\n");
  s.candidate("m", 19, 0);
  auto r = s.kbv(s.run_args());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("19_ReLU.py"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("019_ReLU.py"), std::string::npos) << r.output;
  EXPECT_TRUE(s.worker_log().empty());
}

TEST(RunList, ListsWhatWouldBeEvaluatedWithFiltersAndWritesNothing) {
  Scratch s("list");
  s.problem(1);
  s.problem(2);
  s.candidate("a", 1, 0);
  s.candidate("a", 2, 0);
  s.candidate("b", 1, 0);
  ASSERT_EQ(s.kbv(s.run_args({"--run", "a", "--ids", "1"})).exit_code, 0);
  ASSERT_EQ(s.worker_calls("eval"), 1u) << "--run and --ids filter the run itself";
  auto before = query(s.db(), "SELECT COUNT(*) FROM runs");

  s.clear_worker_log();
  auto list = s.kbv(s.run_args({"--level", "1", "--ids", "1,2", "--run", "a", "--list"}));
  EXPECT_EQ(list.exit_code, 0) << list.output;
  EXPECT_EQ(s.worker_log(), std::vector<std::string>{"probe"}) << "only the device probe";
  EXPECT_EQ(query(s.db(), "SELECT COUNT(*) FROM runs"), before) << "--list writes nothing";
  EXPECT_NE(list.output.find("correct         keep"), std::string::npos) << list.output;
  EXPECT_NE(list.output.find("no              evaluate"), std::string::npos) << list.output;
  EXPECT_NE(list.output.find("2 job(s): 1 to evaluate, 1 kept"), std::string::npos) << list.output;
  EXPECT_EQ(list.output.find("b "), std::string::npos) << "run b is filtered out\n" << list.output;
}

}  // namespace
}  // namespace kbv
