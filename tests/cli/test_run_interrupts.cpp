// kbv run ended early: SIGINT/SIGTERM/SIGHUP mark its run `interrupted` on the way out; a kbv
// killed outright (kill -9) leaves `running`, which the next open marks `interrupted` since its
// process is gone. The summary after a stop in the build phase says so.
#include <signal.h>

#include "cli_harness.hpp"
#include "db_peek.hpp"

namespace kbv {
namespace {

using testing::eventually;
using testing::query;
using testing::Scratch;

class RunSignal : public ::testing::TestWithParam<int> {};

TEST_P(RunSignal, MarksTheRunInterruptedAndExits130) {
  Scratch s("signal-" + std::to_string(GetParam()));
  s.problem(1);
  s.candidate("m", 1, 0, {"wait_for=" + s.path("never")});
  auto run = s.start(s.run_args());
  ASSERT_TRUE(eventually([&] { return s.worker_calls("eval") == 1; }));
  ::kill(run.pid, GetParam());
  auto done = Scratch::wait(run, 30);
  EXPECT_EQ(done.exit_code, 130) << done.output;
  EXPECT_EQ(query(s.db(), "SELECT status FROM runs"), std::vector<std::string>{"interrupted"}) << done.output;
  EXPECT_EQ(query(s.db(), "SELECT COUNT(*) FROM verdicts"), std::vector<std::string>{"0"})
      << "a cancelled evaluation is not a verdict";
}

INSTANTIATE_TEST_SUITE_P(Signals, RunSignal, ::testing::Values(SIGINT, SIGTERM, SIGHUP),
                         [](const auto& info) { return std::string(sigabbrev_np(info.param)); });

TEST(RunKilled, RunningRowOfAKilledKbvIsMarkedInterruptedAtTheNextOpen) {
  Scratch s("kill9");
  s.problem(1);
  s.candidate("m", 1, 0, {"wait_for=" + s.path("go")});
  auto run = s.start(s.run_args());
  ASSERT_TRUE(eventually([&] { return s.worker_calls("eval") == 1; }));
  ::kill(run.pid, SIGKILL);
  Scratch::wait(run);
  ASSERT_EQ(query(s.db(), "SELECT status FROM runs"), std::vector<std::string>{"running"});
  s.write("go", "");
  auto again = s.kbv(s.run_args());
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(query(s.db(), "SELECT status FROM runs ORDER BY id"), (std::vector<std::string>{"interrupted", "finished"}));
  EXPECT_EQ(query(s.db(), "SELECT json_extract(options, '$.pid') FROM runs WHERE id = 1"),
            std::vector<std::string>{std::to_string(run.pid)})
      << "the run records its pid";
}

TEST(RunBuildStop, StopInTheBuildPhaseDoesNotSayBuildPhaseDone) {
  Scratch s("build-stop");
  s.problem(1);
  s.candidate("m", 1, 0, {"build_wait_for=" + s.path("never")});
  auto run = s.start(s.run_args());
  ASSERT_TRUE(eventually([&] { return s.worker_calls("build") == 1; }));
  ::kill(run.pid, SIGINT);
  auto done = Scratch::wait(run, 30);
  EXPECT_EQ(done.exit_code, 130) << done.output;
  EXPECT_EQ(done.output.find("build phase done"), std::string::npos) << done.output;
  EXPECT_NE(done.output.find("build phase stopped"), std::string::npos) << done.output;
}

}  // namespace
}  // namespace kbv
