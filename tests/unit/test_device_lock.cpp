// Separate kbv processes take turns on a device (orchestrate/device_lock.hpp).
#include <gtest/gtest.h>

#include <poll.h>
#include <unistd.h>

#include <filesystem>

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
