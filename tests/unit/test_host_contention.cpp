// The judge's reading of its own threads' run-queue wait (judge/host_contention.hpp).
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "core/speed_bound.hpp"
#include "judge/host_contention.hpp"

namespace fs = std::filesystem;
using kbv::cpu_timing_contended;
using kbv::judge::runqueue_wait_ns;

namespace {

struct TaskDir {
  fs::path root = fs::temp_directory_path() / ("kbv-tasks-" + std::to_string(::getpid()));
  TaskDir() { fs::create_directories(root); }
  ~TaskDir() { fs::remove_all(root); }
  void thread(const std::string& tid, const std::string& schedstat) {
    fs::create_directories(root / tid);
    std::ofstream(root / tid / "schedstat") << schedstat;
  }
};

}  // namespace

TEST(HostContention, SumsTheSecondFieldOverEveryThread) {
  TaskDir d;
  d.thread("100", "5000 300 7\n");
  d.thread("101", "9000 1200 3\n");
  d.thread("102", "garbage\n");  // unreadable: left out, not a failure
  EXPECT_EQ(runqueue_wait_ns(d.root.string()), 1500);
}

TEST(HostContention, NoCountWhereTheKernelKeepsNone) {
  TaskDir d;
  EXPECT_FALSE(runqueue_wait_ns(d.root.string()).has_value());
  EXPECT_FALSE(runqueue_wait_ns((d.root / "missing").string()).has_value());
}

// On this machine's kernel the count exists and grows when this process's threads outnumber the
// cores and all want one: the judge's reading is not a constant.
TEST(HostContention, OwnThreadsWaitWhenTheyOutnumberTheCores) {
  auto before = runqueue_wait_ns();
  ASSERT_TRUE(before.has_value()) << "no /proc/self/task/*/schedstat on this kernel";
  const unsigned n = 4 * std::max(1u, std::thread::hardware_concurrency());
  std::atomic<bool> stop{false};
  std::vector<std::thread> spinners;
  for (unsigned i = 0; i < n; ++i)
    spinners.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto during = runqueue_wait_ns();  // the spinners are alive: their waiting is counted
  stop = true;
  for (auto& t : spinners) t.join();
  ASSERT_TRUE(during.has_value());
  EXPECT_GT(*during - *before, 0);
}

TEST(HostContention, TheLineIsAShareOfTheSampledTime) {
  EXPECT_FALSE(cpu_timing_contended(std::nullopt));
  EXPECT_FALSE(cpu_timing_contended(0.0));
  EXPECT_FALSE(cpu_timing_contended(kbv::kContendedWaitShare));
  EXPECT_TRUE(cpu_timing_contended(0.5));
}

TEST(HostContention, ContendedTimingSaysNeitherFasterNorSlower) {
  std::vector<kbv::SpeedupResult> s(3);
  s[0].compare = "FASTER";
  s[1].compare = "SLOWER";
  s[2].compare = "UNSURE";
  EXPECT_TRUE(kbv::all_unsure(s));
  for (const auto& sp : s) EXPECT_EQ(sp.compare, "UNSURE");
  EXPECT_FALSE(kbv::all_unsure(s));
}
