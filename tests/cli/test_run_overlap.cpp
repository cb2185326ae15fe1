// kbv run --overlap-builds, through the real kbv binary and the fake worker: a candidate is
// evaluated as soon as its build ends while others still build; builds run niced and, on a GPU,
// without it (a device-free build: the architecture is given, CUDA_VISIBLE_DEVICES is empty); an
// import that needs the GPU is built again with it, in a turn of the device's.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_harness.hpp"
#include "db_peek.hpp"

namespace kbv::testing {
namespace {

std::vector<std::string> lines_of(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool logged(const Scratch& s, const std::string& prefix) {
  auto log = s.worker_log();
  return std::any_of(log.begin(), log.end(), [&](const std::string& l) { return l.rfind(prefix, 0) == 0; });
}

int own_nice() { return ::getpriority(PRIO_PROCESS, 0); }

int landlock_abi() {
  long v = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, 1 /* LANDLOCK_CREATE_RULESET_VERSION */);
  return v < 0 ? 0 : static_cast<int>(v);
}

// kbv run on a (fake) GPU with --overlap-builds: the fake worker's device has an architecture.
std::vector<std::string> gpu_overlap_args(Scratch& s, const std::vector<std::string>& extra = {}) {
  s.set_env("FAKE_WORKER_CAPABILITY", "9.0");
  s.set_env("FAKE_WORKER_BUILD_LOG", s.path("builds.log"));
  auto args = s.run_args({"--overlap-builds"});
  std::replace(args.begin(), args.end(), std::string("cpu"), std::string("cuda:0"));
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// Where Landlock cannot seal the GPU from a build (ABI < 5) kbv turns the overlap off and says
// so: that is what these tests then check, and they say they checked nothing more.
#define SKIP_WITHOUT_SEALED_GPU(output)                                                                \
  if (landlock_abi() < 5) {                                                                          \
    EXPECT_NE((output).find("--overlap-builds is off"), std::string::npos) << (output);              \
    GTEST_SKIP() << "Landlock ABI " << landlock_abi() << " here: kbv rightly refuses the overlap";  \
  }

// CUDA_VISIBLE_DEVICES as kbv (and so a worker it does not hide the GPU from) sees it.
std::string visible_here() {
  const char* v = std::getenv("CUDA_VISIBLE_DEVICES");
  return v ? (*v ? v : "(empty)") : "-";
}

std::string candidate_path(const Scratch& s, const std::string& run, int problem) {
  return s.path("runs/" + run + "/level_1_problem_" + std::to_string(problem) + "_sample_0_kernel.py");
}

// Candidate 1's build waits for a file the test writes only once candidate 2 has been evaluated:
// without the overlap, 2 is evaluated after every build, so 1's build would wait for ever (its
// compile limit ends it as a timeout).
TEST(RunOverlap, ACandidateIsEvaluatedWhileAnotherStillBuilds) {
  Scratch s("overlap");
  s.problem(1);
  s.problem(2);
  s.candidate("m", 1, 0, {"build_wait_for=" + s.path("release")});
  s.candidate("m", 2, 0);
  auto run = s.start(gpu_overlap_args(s, {"--jobs", "2", "--compile-timeout", "60"}));
  const bool evaluated_beside = eventually([&] { return logged(s, "eval " + candidate_path(s, "m", 2)); }, landlock_abi() < 5 ? 1 : 30);
  std::ofstream(s.path("release")) << "go\n";
  auto done = Scratch::wait(run, 120);
  ASSERT_EQ(done.exit_code, 0) << done.output;
  SKIP_WITHOUT_SEALED_GPU(done.output);
  EXPECT_TRUE(evaluated_beside) << "candidate 2 was not evaluated while candidate 1 built\n" << done.output;
  auto rows = query(s.db(), "SELECT problem_id || ' ' || outcome FROM verdicts ORDER BY problem_id");
  EXPECT_EQ(rows, (std::vector<std::string>{"1 correct", "2 correct"})) << done.output;
  EXPECT_NE(done.output.find("the evaluation ran beside it"), std::string::npos) << done.output;
  EXPECT_NE(done.output.find("builds and evaluation overlapped"), std::string::npos) << done.output;
}

// A failed build is every protocol's verdict, and its candidate never reaches a judge; the
// others are evaluated as before.
TEST(RunOverlap, AFailedBuildIsNeverEvaluated) {
  Scratch s("overlap-fail");
  s.problem(1);
  s.problem(2);
  s.candidate("m", 1, 0, {"build_outcome=compile_error"});
  s.candidate("m", 2, 0);
  auto r = s.kbv(gpu_overlap_args(s, {"--protocol", "verified"}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  SKIP_WITHOUT_SEALED_GPU(r.output);
  auto rows = query(s.db(), "SELECT problem_id || ' ' || protocol || ' ' || outcome FROM verdicts ORDER BY problem_id, protocol");
  EXPECT_EQ(rows, (std::vector<std::string>{"1 standard compile_error", "1 verified compile_error", "2 standard correct",
                                            "2 verified correct"}))
      << r.output;
  EXPECT_FALSE(logged(s, "eval " + candidate_path(s, "m", 1))) << r.output;
}

// On a GPU the builds get the device's architecture and no GPU, run niced in the idle class
// (policy 5); an import that needs the GPU is built again with it (no architecture, the GPU
// visible, at kbv's own priority) in a second round, then evaluated.
TEST(RunOverlap, BuildsGoWithoutTheGpuUnlessTheirImportNeedsIt) {
  Scratch s("overlap-gpu");
  s.problem(1);
  s.problem(2);
  s.candidate("m", 1, 0);
  s.candidate("m", 2, 0, {"build_needs_device=1"});
  auto r = s.kbv(gpu_overlap_args(s));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  SKIP_WITHOUT_SEALED_GPU(r.output);
  EXPECT_NE(r.output.find("1 candidate(s) whose import may need the GPU"), std::string::npos) << r.output;
  auto rows = query(s.db(), "SELECT problem_id || ' ' || outcome FROM verdicts ORDER BY problem_id");
  EXPECT_EQ(rows, (std::vector<std::string>{"1 correct", "2 correct"})) << r.output;
  auto builds = lines_of(s.path("builds.log"));
  const std::string one = candidate_path(s, "m", 1), two = candidate_path(s, "m", 2);
  auto count = [&](const std::string& line) { return std::count(builds.begin(), builds.end(), line); };
  const std::string niced = " nice=" + std::to_string(std::min(19, own_nice() + 10)) + " policy=5",
                    plain = " nice=" + std::to_string(own_nice()) + " policy=0";
  EXPECT_EQ(count(one + " arch=9.0 visible=(empty)" + niced), 1) << ::testing::PrintToString(builds);
  EXPECT_EQ(count(two + " arch=9.0 visible=(empty)" + niced), 1) << ::testing::PrintToString(builds);
  EXPECT_EQ(count(two + " arch=- visible=" + visible_here() + plain), 1) << ::testing::PrintToString(builds);
  EXPECT_EQ(builds.size(), 3u) << ::testing::PrintToString(builds);
}

// With --no-overlap-builds builds come first, as before the overlap: they see the device as the
// evaluation does, at kbv's own priority.
TEST(RunOverlap, NoOverlapBuildsBuildsFirstAsBefore) {
  Scratch s("overlap-off");
  s.set_env("FAKE_WORKER_CAPABILITY", "9.0");
  s.set_env("FAKE_WORKER_BUILD_LOG", s.path("builds.log"));
  s.problem(1);
  s.candidate("m", 1, 0, {"build_needs_device=1"});
  auto args = s.run_args({"--no-overlap-builds"});
  std::replace(args.begin(), args.end(), std::string("cpu"), std::string("cuda:0"));
  auto r = s.kbv(args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(lines_of(s.path("builds.log")), (std::vector<std::string>{candidate_path(s, "m", 1) + " arch=- visible=" + visible_here() +
                                                                      " nice=" + std::to_string(own_nice()) + " policy=0"}));
  EXPECT_EQ(query(s.db(), "SELECT outcome FROM verdicts"), (std::vector<std::string>{"correct"})) << r.output;
}

// On a GPU with Landlock ABI 5 the overlap is the default: builds go device-free, in the idle class.
TEST(RunOverlap, IsTheDefaultOnAGpu) {
  Scratch s("overlap-default");
  s.set_env("FAKE_WORKER_CAPABILITY", "9.0");
  s.set_env("FAKE_WORKER_BUILD_LOG", s.path("builds.log"));
  s.problem(1);
  s.candidate("m", 1, 0);
  auto args = s.run_args();
  std::replace(args.begin(), args.end(), std::string("cpu"), std::string("cuda:0"));
  auto r = s.kbv(args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  SKIP_WITHOUT_SEALED_GPU(r.output);
  EXPECT_NE(r.output.find("the evaluation ran beside it"), std::string::npos) << r.output;
  const auto builds = lines_of(s.path("builds.log"));
  ASSERT_EQ(builds.size(), 1u) << r.output;
  EXPECT_NE(builds[0].find(" arch=9.0 visible=(empty)"), std::string::npos) << builds[0];
  EXPECT_EQ(query(s.db(), "SELECT outcome FROM verdicts"), (std::vector<std::string>{"correct"})) << r.output;
}

// On the CPU, by default, no word about it (it was not asked for).
TEST(RunOverlap, IsSilentlyOffOnTheCpuByDefault) {
  Scratch s("overlap-cpu-default");
  s.set_env("FAKE_WORKER_BUILD_LOG", s.path("builds.log"));
  s.problem(1);
  s.candidate("m", 1, 0);
  auto r = s.kbv(s.run_args());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("--overlap-builds is off"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("the evaluation ran beside it"), std::string::npos) << r.output;
}

// Ctrl-C while a build holds up the only candidate left: the evaluators waiting for it end, and
// kbv exits as interrupted.
TEST(RunOverlap, AStopWhileEvaluatorsWaitForABuildEndsTheRun) {
  Scratch s("overlap-stop");
  s.problem(1);
  s.candidate("m", 1, 0, {"build_wait_for=" + s.path("never")});
  auto run = s.start(gpu_overlap_args(s));
  ASSERT_TRUE(eventually([&] { return s.worker_calls("build") == 1; }));
  ::kill(run.pid, SIGINT);
  auto done = Scratch::wait(run, 30);
  EXPECT_EQ(done.exit_code, 130) << done.output;
  EXPECT_NE(done.output.find("build phase stopped"), std::string::npos) << done.output;
}

// A sandbox without Landlock (KBV_SANDBOX_LANDLOCK=0) could open the GPU: no overlap.
TEST(RunOverlap, IsOffWhenSandboxesHaveNoLandlock) {
  Scratch s("overlap-nolandlock");
  s.problem(1);
  s.candidate("m", 1, 0);
  auto args = gpu_overlap_args(s);
  s.set_env("KBV_SANDBOX_LANDLOCK", "0");
  auto r = s.kbv(args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--overlap-builds is off"), std::string::npos) << r.output;
  EXPECT_EQ(lines_of(s.path("builds.log")), (std::vector<std::string>{candidate_path(s, "m", 1) + " arch=- visible=" + visible_here() +
                                                                      " nice=" + std::to_string(own_nice()) + " policy=0"}));
}

// On the CPU the timing needs the cores: kbv builds first, and says why.
TEST(RunOverlap, IsOffOnTheCpu) {
  Scratch s("overlap-cpu");
  s.set_env("FAKE_WORKER_BUILD_LOG", s.path("builds.log"));
  s.problem(1);
  s.candidate("m", 1, 0);
  auto r = s.kbv(s.run_args({"--overlap-builds"}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--overlap-builds is off on the CPU"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("the evaluation ran beside it"), std::string::npos) << r.output;
  EXPECT_EQ(lines_of(s.path("builds.log")), (std::vector<std::string>{candidate_path(s, "m", 1) + " arch=- visible=" + visible_here() +
                                                                      " nice=" + std::to_string(own_nice()) + " policy=0"}));
}

}  // namespace
}  // namespace kbv::testing
