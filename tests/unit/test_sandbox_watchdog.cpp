// The judge's watchdog: it ends the sandbox only once the current deadline has passed by its
// grace and nobody moved it; re-arming moves it, disarming stops it.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "judge/sandbox_watchdog.hpp"

namespace kbv::judge {
namespace {

using std::chrono::milliseconds;

TEST(SandboxWatchdog, FiresOnceAfterTheDeadlineAndItsGrace) {
  std::atomic<int> fired{0};
  SandboxWatchdog dog(milliseconds(100), [&] { ++fired; });
  const auto start = SandboxWatchdog::Clock::now();
  dog.arm(start + milliseconds(100));
  std::this_thread::sleep_for(milliseconds(120));
  EXPECT_EQ(fired, 0) << "fired inside the grace";
  while (!dog.fired() && SandboxWatchdog::Clock::now() < start + milliseconds(5000)) std::this_thread::sleep_for(milliseconds(5));
  EXPECT_TRUE(dog.fired());
  EXPECT_GE(SandboxWatchdog::Clock::now() - start, milliseconds(200));
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_EQ(fired, 1);
}

TEST(SandboxWatchdog, ArmingAgainMovesTheDeadlineAndDisarmingStopsIt) {
  std::atomic<int> fired{0};
  SandboxWatchdog dog(milliseconds(50), [&] { ++fired; });
  dog.arm(SandboxWatchdog::Clock::now() + milliseconds(50));
  std::this_thread::sleep_for(milliseconds(30));
  dog.arm(SandboxWatchdog::Clock::now() + milliseconds(300));  // the next protocol's limit
  std::this_thread::sleep_for(milliseconds(150));
  EXPECT_EQ(fired, 0) << "the old deadline still counted";
  dog.disarm();  // the sandbox has ended
  std::this_thread::sleep_for(milliseconds(400));
  EXPECT_EQ(fired, 0);
  EXPECT_FALSE(dog.fired());
}

}  // namespace
}  // namespace kbv::judge

// The second trigger: the candidate's process has ended and the judge, still armed, has not
// noticed (it is held inside a driver call).
namespace kbv::judge {
namespace {

struct EndedProbeFake {
  std::atomic<int> status{-1};  // -1: running (or reaped)
  SandboxWatchdog::EndedProbe probe() {
    return [this]() -> std::optional<int> { int s = status.load(); return s < 0 ? std::nullopt : std::optional<int>(s); };
  }
};

TEST(SandboxWatchdog, ReportsAJudgeHeldAfterTheSandboxEndedOnceTheGracePasses) {
  EndedProbeFake sandbox;
  std::atomic<int> stuck{-1}, overrun{0};
  SandboxWatchdog dog(milliseconds(150), [&] { ++overrun; });
  dog.arm(SandboxWatchdog::Clock::now() + std::chrono::hours(1));
  dog.watch_ended(sandbox.probe(), [&](int status) { stuck = status; }, milliseconds(10));
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_EQ(stuck, -1) << "reported while the sandbox ran";
  const auto ended = SandboxWatchdog::Clock::now();
  sandbox.status = 6 << 8;
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_EQ(stuck, -1) << "reported inside the grace";
  while (stuck < 0 && SandboxWatchdog::Clock::now() < ended + milliseconds(5000)) std::this_thread::sleep_for(milliseconds(5));
  EXPECT_EQ(stuck, 6 << 8) << "the sandbox's wait status goes to the judge's action";
  EXPECT_GE(SandboxWatchdog::Clock::now() - ended, milliseconds(150));
  EXPECT_EQ(overrun, 0);
}

TEST(SandboxWatchdog, AJudgeThatNoticesTheEndOrIsDisarmedIsNotStuck) {
  EndedProbeFake sandbox;
  std::atomic<int> stuck{0};
  SandboxWatchdog dog(milliseconds(100), [] {});
  dog.arm(SandboxWatchdog::Clock::now() + std::chrono::hours(1));
  dog.watch_ended(sandbox.probe(), [&](int) { ++stuck; }, milliseconds(10));
  sandbox.status = 9;
  std::this_thread::sleep_for(milliseconds(50));
  sandbox.status = -1;  // the judge reaped it: it noticed
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_EQ(stuck, 0) << "an end the judge noticed within the grace";
  sandbox.status = 9;
  std::this_thread::sleep_for(milliseconds(50));
  dog.disarm();  // the judge reached its end: it stops the sandbox itself
  std::this_thread::sleep_for(milliseconds(250));
  EXPECT_EQ(stuck, 0) << "reported after disarm";
}

// Without watch_ended (CPU, device-free builds) an ended sandbox is the judge's to notice.
TEST(SandboxWatchdog, WithoutTheEndedProbeOnlyTheDeadlineCounts) {
  std::atomic<int> overrun{0};
  SandboxWatchdog dog(milliseconds(50), [&] { ++overrun; });
  dog.arm(SandboxWatchdog::Clock::now() + milliseconds(300));
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_EQ(overrun, 0);
}

// After the overrun killed the sandbox, a judge still held is reported too (as a timeout).
TEST(SandboxWatchdog, AfterTheOverrunTheEndedSandboxIsStillWatched) {
  EndedProbeFake sandbox;
  std::atomic<int> stuck{-1};
  SandboxWatchdog dog(milliseconds(100), [&] { sandbox.status = 9; });  // the overrun kills it
  dog.watch_ended(sandbox.probe(), [&](int status) { stuck = status; }, milliseconds(10));
  const auto start = SandboxWatchdog::Clock::now();
  dog.arm(start + milliseconds(50));
  while (stuck < 0 && SandboxWatchdog::Clock::now() < start + milliseconds(5000)) std::this_thread::sleep_for(milliseconds(5));
  EXPECT_TRUE(dog.fired());
  EXPECT_EQ(stuck, 9);
  EXPECT_GE(SandboxWatchdog::Clock::now() - start, milliseconds(250)) << "deadline + grace, then the grace again";
}

}  // namespace
}  // namespace kbv::judge

namespace kbv::judge {
namespace {

// A judge that reaches its end while the stuck action runs waits for it: two verdicts for one
// protocol would go to the wrong protocols.
TEST(SandboxWatchdog, DisarmWaitsForAStuckActionUnderWay) {
  std::atomic<int> sandbox{-1};
  std::atomic<bool> acting{false}, done{false};
  SandboxWatchdog dog(milliseconds(50), [] {});
  dog.arm(SandboxWatchdog::Clock::now() + std::chrono::hours(1));
  dog.watch_ended([&]() -> std::optional<int> { int s = sandbox.load(); return s < 0 ? std::nullopt : std::optional<int>(s); },
                  [&](int) {
                    acting = true;
                    std::this_thread::sleep_for(milliseconds(300));
                    done = true;
                  },
                  milliseconds(5));
  sandbox = 9;
  for (int i = 0; i < 5000 && !acting; ++i) std::this_thread::sleep_for(milliseconds(1));
  ASSERT_TRUE(acting);
  dog.disarm();
  EXPECT_TRUE(done) << "disarm() returned while the action ran";
}

}  // namespace
}  // namespace kbv::judge
