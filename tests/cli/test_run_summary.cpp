// What `kbv run` says when it judged little or nothing, and the inputs it refuses before any
// work: a summary of outcomes at the end (the skipped and internal errors explained), a failing
// exit when every evaluation was kbv's own fault, --list naming the jobs that will be skipped,
// colliding candidate names, a DB that is not SQLite, a device the judge cannot open.
#include "cli_harness.hpp"

namespace kbv {
namespace {

using testing::Scratch;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(RunSummary, CountsOutcomesAndExplainsCudaSkips) {
  Scratch s("summary-cuda");
  s.problem(1);
  s.candidate("m", 1, 0);
  s.candidate("m", 1, 1, {"outcome=skipped", "reason=candidate needs CUDA (extension 'x' has CUDA sources; the device is a CPU); run it with --device cuda"});
  s.candidate("m", 1, 2, {"outcome=skipped", "reason=candidate needs CUDA (y); run it with --device cuda"});
  auto r = s.kbv(s.run_args({"--quiet"}));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "outcomes of the 3 verdict(s) of this run: 1 correct, 2 skipped")) << r.output;
  EXPECT_TRUE(has(r.output, "2 of 3 skipped: CUDA candidates need a GPU")) << r.output;
  EXPECT_FALSE(has(r.output, "nothing was judged")) << r.output;
}

TEST(RunSummary, NothingJudgedIsSaidLoudly) {
  Scratch s("summary-nothing");
  s.problem(1);
  s.candidate("m", 1, 0, {"outcome=skipped", "reason=candidate needs CUDA (z); run it with --device cuda"});
  auto r = s.kbv(s.run_args());
  EXPECT_EQ(r.exit_code, 0) << r.output;  // a CPU machine skipping CUDA candidates is no failure of kbv
  EXPECT_TRUE(has(r.output, "1 of 1 skipped: CUDA candidates need a GPU")) << r.output;
  EXPECT_TRUE(has(r.output, "WARNING: nothing was judged")) << r.output;
}

TEST(RunSummary, EveryEvaluationAnInternalErrorFailsTheRunWithItsFirstCause) {
  Scratch s("summary-internal");
  s.problem(1);
  s.candidate("m", 1, 0, {"outcome=internal_error", "reason=cannot start the sandbox (/x/kbv-sandbox): exec failed"});
  s.candidate("m", 1, 1, {"outcome=internal_error", "reason=cannot start the sandbox (/x/kbv-sandbox): exec failed"});
  auto r = s.kbv(s.run_args());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r.output, "2 of 2 internal_error")) << r.output;
  EXPECT_TRUE(has(r.output, "the first: cannot start the sandbox (/x/kbv-sandbox): exec failed")) << r.output;
  EXPECT_TRUE(has(r.output, "every evaluation of this run was an internal_error")) << r.output;

  // One judged verdict among them: the run did its work; the errors are still named.
  Scratch t("summary-some-internal");
  t.problem(1);
  t.candidate("m", 1, 0, {"outcome=internal_error", "reason=boom"});
  t.candidate("m", 1, 1);
  auto q = t.kbv(t.run_args());
  EXPECT_EQ(q.exit_code, 0) << q.output;
  EXPECT_TRUE(has(q.output, "1 of 2 internal_error")) << q.output;
}

TEST(RunSummary, ListSaysWhichJobsWillBeSkippedAndWhy) {
  Scratch s("list-skips");
  s.problem(1);
  s.candidate("m", 1, 0);
  s.write("runs/m/level_1_problem_1_sample_1_kernel.py",
          "from torch.utils.cpp_extension import load_inline\nm = load_inline(name='x', cpp_sources='', cuda_sources='__global__ void k() {}')\n");
  auto r = s.kbv(s.run_args({"--list"}));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "will be skipped: CUDA candidates need a GPU")) << r.output;
  EXPECT_TRUE(has(r.output, "1 of 2 job(s) to evaluate will be skipped")) << r.output;
  // The run itself says so before it starts, even with --quiet.
  auto run = s.kbv(s.run_args({"--quiet"}));
  EXPECT_TRUE(has(run.output, "1 of 2 job(s) to evaluate will be skipped")) << run.output;
}

TEST(RunRefuses, CandidateFilesNamingOneSampleAreBothNamed) {
  Scratch s("colliding");
  s.problem(19);
  s.write("runs/m/level_1_problem_19_sample_0_kernel.py", "# a\n");
  s.write("runs/m/level_01_problem_019_sample_0_kernel.py", "# b\n");
  auto r = s.kbv(s.run_args());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r.output, "level_1_problem_19_sample_0_kernel.py")) << r.output;
  EXPECT_TRUE(has(r.output, "level_01_problem_019_sample_0_kernel.py")) << r.output;
  EXPECT_EQ(s.worker_calls("eval"), 0u);
}

TEST(RunRefuses, ADbThatIsNotSqliteLeavesNoLock) {
  Scratch s("not-sqlite");
  s.problem(1);
  s.candidate("m", 1, 0);
  s.write("kbv.db", "these are my notes, not a database\n");
  auto r = s.kbv(s.run_args());
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "is not a SQLite database")) << r.output;
  EXPECT_FALSE(has(r.output, "SELECT") || has(r.output, "PRAGMA") || has(r.output, "CREATE")) << r.output;
  EXPECT_FALSE(fs::exists(s.db() + ".lock"));
  std::ifstream in(s.db());
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first, "these are my notes, not a database") << "the file is left as it was";

  for (const std::vector<std::string>& cmd : {std::vector<std::string>{"report", "--db", s.db()},
                                              std::vector<std::string>{"export", "--db", s.db(), "--out", s.path("x")}}) {
    auto q = s.kbv(cmd);
    EXPECT_NE(q.exit_code, 0) << q.output;
    EXPECT_TRUE(has(q.output, "is not a SQLite database")) << cmd[0] << ": " << q.output;
  }
}

TEST(RunRefuses, ADeviceTheJudgeCannotOpenNamesNoOldBinary) {
  Scratch s("no-gpu");
  s.problem(1);
  s.candidate("m", 1, 0);
  s.set_env("FAKE_WORKER_PROBE_FAIL", "RuntimeError: Found no NVIDIA driver on your system");
  s.set_env("CUDA_VISIBLE_DEVICES", "");
  auto args = s.run_args();
  args[8] = "cuda";
  auto r = s.kbv(args);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r.output, "cannot use device 'cuda")) << r.output;
  EXPECT_TRUE(has(r.output, "Found no NVIDIA driver")) << r.output;
  EXPECT_TRUE(has(r.output, "this machine shows no GPU")) << r.output;
  EXPECT_FALSE(has(r.output, "kbv-worker")) << r.output;
  EXPECT_FALSE(has(r.output, "--probe")) << r.output;
}

}  // namespace
}  // namespace kbv
