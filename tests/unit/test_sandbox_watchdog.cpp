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
