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
using kbv::judge::thread_waits;
using kbv::judge::ThreadWaits;
using kbv::judge::waited_between;

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

TEST(HostContention, ReadsTheSecondFieldOfEveryThread) {
  TaskDir d;
  d.thread("100", "5000 300 7\n");
  d.thread("101", "9000 1200 3\n");
  d.thread("102", "garbage\n");  // unreadable: left out, not a failure
  auto waits = thread_waits(d.root.string());
  ASSERT_TRUE(waits.has_value());
  EXPECT_EQ(*waits, (ThreadWaits{{100, 300}, {101, 1200}}));
}

TEST(HostContention, NoCountWhereTheKernelKeepsNone) {
  TaskDir d;
  EXPECT_FALSE(thread_waits(d.root.string()).has_value());
  EXPECT_FALSE(thread_waits((d.root / "missing").string()).has_value());
}

// Thread by thread: a thread that ended during the sample takes none of the others' wait away
// (a sum over the threads alive at each reading subtracted its whole life's wait), and one that
// began during it counts all of its own.
TEST(HostContention, WaitIsDiffedThreadByThread) {
  const ThreadWaits before{{1, 1000}, {2, 50000}};
  const ThreadWaits after{{1, 1600}, {3, 200}};  // 2 ended, 3 began
  EXPECT_EQ(waited_between(before, after), 600 + 200);
  EXPECT_EQ(waited_between(after, after), 0);
}

// On this machine's kernel the count exists and grows when this process's threads outnumber the
// cores and all want one: the judge's reading is not a constant.
TEST(HostContention, OwnThreadsWaitWhenTheyOutnumberTheCores) {
  auto before = thread_waits();
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
  auto during = thread_waits();  // the spinners are alive: their waiting is counted
  stop = true;
  for (auto& t : spinners) t.join();
  ASSERT_TRUE(during.has_value());
  EXPECT_GT(waited_between(*before, *during), 0);
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

TEST(HostContention, ACpuTimingWithoutAShareIsNoFigure) {
  kbv::TimingResult t;
  t.clock = "cpu_steady_clock";
  EXPECT_TRUE(kbv::cpu_timing_unreliable(t)) << "never read: unknown";
  t.cpu_wait_share = 0.04;
  EXPECT_FALSE(kbv::cpu_timing_unreliable(t));
  t.cpu_wait_share = 0.4;
  EXPECT_TRUE(kbv::cpu_timing_unreliable(t));
  kbv::TimingResult gpu;
  gpu.clock = "cuda_events";
  EXPECT_FALSE(kbv::cpu_timing_unreliable(gpu)) << "the GPU's events: no CPU share to read";
}
