// Candidates built to load every CPU core while the judge times the baselines. They run alone
// (ctest RUN_SERIAL): their helpers would slow whatever other evaluation shares the machine.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "kbv_cli.hpp"

namespace kbv {
namespace {

const std::string kHacks = testing::kSource + "/examples/hacks/";

// The helpers burn the cores whenever the candidate is not being called, so a harness that
// times the baseline while they run reports a speedup for a kernel that is no faster (measured
// on this 2-core machine, idle, bench/RESULTS.md, 2026-12-02: with the freeze turned off the same
// reduction as the baseline read 1.2-11.7x; with it, 0.23-0.58x).
//
// What is asserted is the mechanism, which load cannot move: every counted round timed the
// baselines and the hop with every process of the sandbox stopped (timing.sandbox_frozen; a
// round in which the freeze did not take is not counted, and a sandbox that cannot be frozen is
// a protocol violation: StrictCli.AnUnfreezableSandboxIsAProtocolViolation; that a frozen
// sandbox runs nothing: Isolation.AFrozenSandboxRunsNothingUntilThawed). The speedup itself is
// not asserted: on a loaded 2-core machine the same computation on both sides, with no helpers
// at all, read anything from 0.3x to 23.7x (docs/timing.md, "CPU timing under load");
// bench/burner_baseline.sh measures it on an idle machine beside its control.
TEST(StrictCli, BurnerProcessesDoNotSlowTheBaseline) {
  const std::string problem = testing::kSource + "/tests/integration/fixtures/burner/94_MSELoss_1M.py";
  for (const std::string protocol : {"standard", "strict"}) {
    auto r = testing::run_kbv_eval({problem, kHacks + "burner_processes.py", "--protocol", protocol, "--time-budget", "1"}, "cpu");
    ASSERT_EQ(r.outcome(), "correct") << protocol << "\n" << r.context();
    const auto& t = r.verdict["timing"];
    EXPECT_TRUE(t["sandbox_frozen"].get<bool>()) << r.context();
    EXPECT_GT(t["rounds"].get<int>(), 0) << r.context();
    bool timed = false;
    for (const auto& s : t["speedups"]) timed = timed || s["baseline"] == t["primary_baseline"];
    EXPECT_TRUE(timed) << "the verdict carries its speedup, measured only on frozen rounds\n" << r.context();
  }
}

// Load from outside the evaluation: busy loops (twice as many as the cores) beside an honest
// candidate whose computation is the baseline's own. Under such load the baseline, run by a judge
// that is busy between samples, waits for a core while the sleeping sandbox is scheduled first:
// the same computation read 4-7x FASTER (bench/RESULTS.md, issue 35). The judge reads its own
// threads' run-queue wait (judge/host_contention.hpp) and says the host was contended: the share
// is far above the line whatever else loads the machine, and no speedup may say FASTER or SLOWER.
TEST(StrictCli, CpuTimingBesideBusyLoopsIsUnsure) {
  const std::string problem = testing::kSource + "/tests/integration/fixtures/burner/94_MSELoss_1M.py";
  const std::string identical = testing::kSource + "/tests/integration/fixtures/burner/mse_identical.py";
  std::atomic<bool> stop{false};
  std::vector<std::thread> loops;
  for (unsigned i = 0; i < 2 * std::max(1u, std::thread::hardware_concurrency()); ++i)
    loops.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  auto r = testing::run_kbv_eval({problem, identical, "--protocol", "standard", "--time-budget", "1"}, "cpu");
  stop = true;
  for (auto& t : loops) t.join();
  ASSERT_EQ(r.outcome(), "correct") << r.context();
  const auto& t = r.verdict["timing"];
  ASSERT_TRUE(t.contains("cpu_wait_share")) << "the judge read no run-queue wait\n" << r.context();
  EXPECT_GT(t["cpu_wait_share"].get<double>(), 0.1) << r.context();
  ASSERT_FALSE(t["speedups"].empty()) << r.context();
  for (const auto& s : t["speedups"]) EXPECT_EQ(s["compare"], "UNSURE") << r.context();
  bool warned = false;
  for (const auto& w : r.verdict["warnings"]) warned = warned || w.get<std::string>().find("contended") != std::string::npos;
  EXPECT_TRUE(warned) << r.context();
}

}  // namespace
}  // namespace kbv
