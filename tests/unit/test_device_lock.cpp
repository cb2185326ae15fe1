// Separate kbv processes take turns on a device (orchestrate/device_lock.hpp).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "orchestrate/device_lock.hpp"

namespace fs = std::filesystem;
using kbv::device_lock_name;
using kbv::DeviceLock;
using kbv::GpuInventory;
using kbv::LockedTurn;

namespace {

struct LockDir {
  fs::path path = fs::temp_directory_path() / ("kbv-locks-" + std::to_string(::getpid()) + "-" +
                                               ::testing::UnitTest::GetInstance()->current_test_info()->name());
  LockDir() { fs::create_directories(path); }
  ~LockDir() { fs::remove_all(path); }
  std::string str() const { return path.string(); }
};

GpuInventory three_gpus() {
  GpuInventory host;
  host.nvml_uuids = std::vector<std::string>{"GPU-aaaa-0000", "GPU-bbbb-1111", "GPU-cccc-2222"};
  return host;
}

bool readable_within(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, ms) == 1;
}

// Until an exclusive waiter holds the intent file DIR/NAME.intent (it is waiting): polled, not
// slept, so that a loaded machine cannot make a test pass or fail by its scheduling. False: it
// never did within 10 s.
bool waiter_queued(const LockDir& dir, const std::string& name) {
  const int intent = ::open((dir.path / (name + ".intent")).c_str(), O_RDONLY | O_CLOEXEC);
  if (intent < 0) return false;
  bool queued = false;
  for (int i = 0; i < 2000 && !queued; ++i) {
    queued = ::flock(intent, LOCK_SH | LOCK_NB) != 0;
    if (!queued) {
      ::flock(intent, LOCK_UN);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  ::close(intent);
  return queued;
}

}  // namespace

TEST(DeviceLockName, OnePerPhysicalDeviceWhateverTheNumbering) {
  const GpuInventory host = three_gpus();
  EXPECT_EQ(device_lock_name("cpu", std::nullopt, host), "cpu");
  EXPECT_EQ(device_lock_name("cuda:1", std::nullopt, host), "gpu-GPU-bbbb-1111");
  EXPECT_EQ(device_lock_name("cuda", std::nullopt, host), "gpu-GPU-aaaa-0000");
  // cuda:1 under CUDA_VISIBLE_DEVICES=2,1 is physical GPU 1: the same lock as cuda:1 without it.
  EXPECT_EQ(device_lock_name("cuda:0", std::string("2,1"), host), "gpu-GPU-cccc-2222");
  EXPECT_EQ(device_lock_name("cuda:1", std::string("2,1"), host), device_lock_name("cuda:1", std::nullopt, host));
  // A UUID prefix, as CUDA accepts one.
  EXPECT_EQ(device_lock_name("cuda:0", std::string("GPU-bbbb"), host), "gpu-GPU-bbbb-1111");
  // Without NVML: the physical index.
  EXPECT_EQ(device_lock_name("cuda:1", std::string("4,5"), GpuInventory{}), "gpu-index-5");
  EXPECT_EQ(device_lock_name("cuda:0", std::string("GPU-x/../y"), GpuInventory{}), "gpu-GPU-x____y") << "a file name only";
}

TEST(DeviceLock, ExclusiveKeepsEveryoneElseOut) {
  LockDir dir;
  DeviceLock a(dir.str(), "cpu"), b(dir.str(), "cpu");
  std::atomic<bool> once{true};
  ASSERT_TRUE(a.acquire(true));
  EXPECT_FALSE(b.acquire(true, &once));
  EXPECT_FALSE(b.acquire(false, &once)) << "shared waits for exclusive";
  a.release();
  EXPECT_TRUE(b.acquire(true, &once));
}

TEST(DeviceLock, SharedHoldersRunTogetherButNotBesideExclusive) {
  LockDir dir;
  DeviceLock a(dir.str(), "cpu"), b(dir.str(), "cpu"), c(dir.str(), "cpu");
  std::atomic<bool> once{true};
  ASSERT_TRUE(a.acquire(false));
  EXPECT_TRUE(b.acquire(false, &once));
  EXPECT_FALSE(c.acquire(true, &once));
  a.release();
  b.release();
  EXPECT_TRUE(c.acquire(true, &once));
}

TEST(DeviceLock, OtherDevicesAreOtherLocks) {
  LockDir dir;
  DeviceLock a(dir.str(), "gpu-GPU-aaaa"), b(dir.str(), "gpu-GPU-bbbb");
  std::atomic<bool> once{true};
  ASSERT_TRUE(a.acquire(true));
  EXPECT_TRUE(b.acquire(true, &once));
}

// The judge behind the gate starts at once; the gate opens only once the device's lock is held.
TEST(LockedTurn, TheGateOpensWhenTheDeviceIsFree) {
  LockDir dir;
  DeviceLock other(dir.str(), "gpu-x");
  ASSERT_TRUE(other.acquire(true));
  LockedTurn turn(dir.str(), "gpu-x", true);
  EXPECT_FALSE(readable_within(turn.gate_fd(), 200)) << "held by another: closed";
  EXPECT_FALSE(turn.opened_at().has_value());
  other.release();
  ASSERT_TRUE(readable_within(turn.gate_fd(), 10000));
  char byte = 0;
  EXPECT_EQ(::read(turn.gate_fd(), &byte, 1), 1);
  EXPECT_TRUE(turn.opened_at().has_value());
  std::atomic<bool> once{true};
  EXPECT_FALSE(other.acquire(true, &once)) << "the turn holds the device";
  turn.end();
  EXPECT_TRUE(other.acquire(true, &once)) << "ended: the device is free";
}

TEST(LockedTurn, EndedUnopenedClosesTheGate) {
  LockDir dir;
  DeviceLock other(dir.str(), "gpu-x");
  ASSERT_TRUE(other.acquire(true));
  LockedTurn turn(dir.str(), "gpu-x", true);
  turn.end();  // the judge died before its turn: the waiting stops
  char byte = 0;
  EXPECT_EQ(::read(turn.gate_fd(), &byte, 1), 0) << "end of file, no byte: the judge gives up";
}

// A warm judge's batch holds the device one candidate at a time: again() lets a waiting evaluation
// in between two candidates, and the gate opens for the next one once the device is free again.
TEST(LockedTurn, AgainLetsAWaiterInBetweenCandidates) {
  LockDir dir;
  LockedTurn turn(dir.str(), "gpu-x", true);
  ASSERT_TRUE(readable_within(turn.gate_fd(), 10000));
  char byte = 0;
  ASSERT_EQ(::read(turn.gate_fd(), &byte, 1), 1);  // the first candidate's turn
  DeviceLock other(dir.str(), "gpu-x");
  std::atomic<bool> once{true};
  EXPECT_FALSE(other.acquire(true, &once)) << "the batch's candidate holds the device";
  std::atomic<bool> stop{false};
  std::atomic<bool> got{false};
  std::thread waiter([&] { got = other.acquire(true, &stop, DeviceLock::Clock::now() + std::chrono::seconds(10)); });
  const bool queued = waiter_queued(dir, "gpu-x");
  turn.again();  // that candidate is done: whoever waits comes first
  waiter.join();
  ASSERT_TRUE(queued) << "the other never waited";
  EXPECT_TRUE(got) << "the waiter had its turn between the batch's candidates";
  EXPECT_FALSE(readable_within(turn.gate_fd(), 200)) << "the next candidate waits while the other holds the device";
  other.release();
  ASSERT_TRUE(readable_within(turn.gate_fd(), 10000)) << "free again: the next candidate's gate opens";
  EXPECT_EQ(::read(turn.gate_fd(), &byte, 1), 1);
  EXPECT_TRUE(turn.wait_open());
  turn.end();
  EXPECT_TRUE(other.acquire(true, &once)) << "ended: the device is free";
}

// The red team's (session 23): a link planted in the shared folder must not make kbv, as root,
// create or lock any file it points at; and a file of another user's is not trusted.
TEST(DeviceLock, NeverThroughALink) {
  LockDir dir;
  const fs::path target = dir.path / "elsewhere";
  fs::create_symlink(target, dir.path / "cpu.lock");
  EXPECT_THROW(DeviceLock(dir.str(), "cpu"), std::exception);
  EXPECT_FALSE(fs::exists(target)) << "nothing created through the link";
}

TEST(DeviceLock, TheFolderMustBeAFolder) {
  LockDir dir;
  std::ofstream(dir.path / "file") << "";
  EXPECT_THROW(DeviceLock((dir.path / "file").string(), "cpu"), std::exception);
}

// flock keeps no queue: without the intent file, untimed evaluations taking turns in the shared
// lock kept a timed one out for as long as they came (47 s in the red team's run).
TEST(DeviceLock, AWaitingExclusiveKeepsNewSharedHoldersOut) {
  LockDir dir;
  DeviceLock untimed(dir.str(), "cpu"), timed(dir.str(), "cpu"), later(dir.str(), "cpu");
  ASSERT_TRUE(untimed.acquire(false));
  std::atomic<bool> stop{false};
  std::thread waiter([&] { timed.acquire(true, &stop); });
  EXPECT_TRUE(waiter_queued(dir, "cpu")) << "the timed one never waited";
  std::atomic<bool> once{true};
  EXPECT_FALSE(later.acquire(false, &once)) << "a new shared holder passed a waiting exclusive one";
  untimed.release();
  waiter.join();
  EXPECT_TRUE(timed.held());
  EXPECT_FALSE(later.acquire(false, &once)) << "shared beside exclusive";
  timed.release();
  EXPECT_TRUE(later.acquire(false, &once));
}

TEST(DeviceLock, AWaitEndsAtItsDeadline) {
  LockDir dir;
  DeviceLock a(dir.str(), "cpu"), b(dir.str(), "cpu");
  ASSERT_TRUE(a.acquire(true));
  EXPECT_FALSE(b.acquire(true, nullptr, DeviceLock::Clock::now() + std::chrono::milliseconds(50)));
  EXPECT_FALSE(b.held());
}
