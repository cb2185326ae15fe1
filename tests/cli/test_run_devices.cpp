// kbv run over several devices, through the real kbv binary and the fake worker (which logs the
// device each evaluation was handed and the CUDA_VISIBLE_DEVICES it saw).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "cli_harness.hpp"

namespace kbv::testing {
namespace {

struct DeviceCall {
  std::string device, visible, job;  // job: "<candidate> <protocol>"
};

std::vector<DeviceCall> device_calls(const Scratch& s) {
  std::vector<DeviceCall> out;
  std::ifstream in(s.path("devices.log"));
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    DeviceCall c;
    std::string candidate, protocol;
    words >> c.device >> c.visible >> candidate >> protocol;
    c.job = candidate + " " + protocol;
    out.push_back(c);
  }
  return out;
}

// Eight candidates; each evaluation takes a moment, so both devices are busy at once.
Scratch& corpus(Scratch& s) {
  s.set_env("FAKE_WORKER_DEVICE_LOG", s.path("devices.log"));
  for (int p = 1; p <= 4; ++p) s.problem(p);
  for (const char* run : {"model-a", "model-b"})
    for (int p = 1; p <= 4; ++p) s.candidate(run, p, 0, {"sleep=0.2"});
  return s;
}

std::vector<std::string> args(const Scratch& s, const std::vector<std::string>& extra) {
  std::vector<std::string> a{"run", "--problems", s.path("suite"), "--runs", s.path("runs"), "--db", s.db(), "--protocol",
                             "standard,verified"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// Every job exactly once, and each of `devices` got some of them (so no job went to two).
void expect_disjoint_work(const std::vector<DeviceCall>& calls, const std::set<std::string>& devices) {
  std::map<std::string, std::string> device_of_job;
  std::map<std::string, int> jobs_per_device;
  for (const auto& c : calls) {
    EXPECT_TRUE(device_of_job.emplace(c.job, c.device).second) << c.job << " ran twice";
    ++jobs_per_device[c.device];
  }
  EXPECT_EQ(device_of_job.size(), 16u);  // 8 candidates x 2 protocols
  std::set<std::string> used;
  for (const auto& [d, n] : jobs_per_device) used.insert(d);
  EXPECT_EQ(used, devices);
}

TEST(RunDevices, TwoDevicesGetDisjointWorkAndEveryJobRunsOnce) {
  Scratch s("devices-two");
  corpus(s);
  auto r = s.kbv(args(s, {"--gpus", "cuda:0,cuda:1"}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_disjoint_work(device_calls(s), {"cuda:0", "cuda:1"});
}

// No GPU on this machine: CUDA_VISIBLE_DEVICES alone (UUIDs, counted as listed without NVML)
// makes two devices, and each worker sees the variable as kbv got it, so its logical cuda:i is
// the physical GPU the user meant.
TEST(RunDevices, CudaVisibleDevicesDecidesTheDevicesAndReachesEveryWorker) {
  if (std::filesystem::exists("/dev/nvidiactl")) GTEST_SKIP() << "this machine has NVIDIA GPUs; the test needs a host without";
  Scratch s("devices-visible");
  corpus(s);
  s.set_env("CUDA_VISIBLE_DEVICES", "GPU-1111,GPU-2222");
  auto r = s.kbv(args(s, {}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("no GPU found"), std::string::npos) << r.output;
  auto calls = device_calls(s);
  expect_disjoint_work(calls, {"cuda:0", "cuda:1"});
  for (const auto& c : calls) EXPECT_EQ(c.visible, "GPU-1111,GPU-2222");
}

// "-1" alone would mean the CPU (VisibleDevices.EmptyOrMinusOneMeansNoGpu); --gpus still wins.
TEST(RunDevices, GpusWinOverCudaVisibleDevices) {
  Scratch s("devices-gpus-win");
  corpus(s);
  s.set_env("CUDA_VISIBLE_DEVICES", "-1");
  auto r = s.kbv(args(s, {"--gpus", "0,1"}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_disjoint_work(device_calls(s), {"cuda:0", "cuda:1"});
}

}  // namespace
}  // namespace kbv::testing
