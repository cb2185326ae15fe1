// GPU tests that need the device to themselves (ctest RUN_SERIAL): whether the sandbox's context
// left work on the GPU while the judge timed the baselines is judged against the null call of an
// idle device, and another evaluation on the same GPU is not idle.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <thread>

#include "gpu_eval.hpp"

namespace kbv {
namespace {

// A kernel left resident on the device between calls slows whatever the judge times in its own
// or the twin's context; the null call timed again once the sandbox has ended shows it.
TEST(GpuStrict, PersistentKernelIsDeviceBusy) {
  auto strict = eval_gpu(kHacks + "persistent_kernel.py", "strict");
  EXPECT_EQ(strict.outcome(), "incorrect") << strict.context();
  EXPECT_TRUE(integrity_flags(strict).count("device_busy")) << strict.context();
  auto standard = eval_gpu(kHacks + "persistent_kernel.py", "standard");
  EXPECT_EQ(standard.outcome(), "correct") << standard.context();
  bool warned = false;
  for (const auto& w : standard.verdict["warnings"]) warned |= w.get<std::string>().find("not to be trusted") != std::string::npos;
  EXPECT_TRUE(warned) << standard.context();
}

// Another process that holds a CUDA context and memory on the device but runs nothing on it (a kbv
// judge kept warm between its candidates, waiting for its turn; a notebook left open) is no
// tenant: it cannot have made the device busy, and strict's device_busy stays the candidate's.
// Through warm judges this hack was `correct` (bench/RESULTS.md, session 24).
TEST(GpuStrict, AnIdleTenantDoesNotExcuseABusyDevice) {
  const std::string ready = testing::build_dir() + "/idle-tenant.ready";
  std::filesystem::remove(ready);
  const char* script =
      "import pathlib, sys, time, torch\n"
      "x = torch.ones(1 << 24, device='cuda'); torch.cuda.synchronize()\n"
      "pathlib.Path(sys.argv[1]).write_text('1'); time.sleep(900)\n";
  const pid_t tenant = ::fork();
  if (tenant == 0) {
    ::execl(KBV_PYTHON_EXECUTABLE, KBV_PYTHON_EXECUTABLE, "-c", script, ready.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ASSERT_GT(tenant, 0);
  for (int i = 0; i < 600 && !std::filesystem::exists(ready); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const bool up = std::filesystem::exists(ready);
  CliResult strict;
  if (up) strict = eval_gpu(kHacks + "persistent_kernel.py", "strict");
  ::kill(tenant, SIGKILL);
  ::waitpid(tenant, nullptr, 0);
  ASSERT_TRUE(up) << "the idle tenant did not start";
  EXPECT_EQ(strict.outcome(), "incorrect") << strict.context();
  EXPECT_TRUE(integrity_flags(strict).count("device_busy")) << strict.context();
}

// The honest controls' hop matches the idle device's, and the sandbox was frozen around the
// baselines (no false device_busy).
TEST(GpuStrict, HonestKernelLeavesTheDeviceIdle) {
  auto r = eval_gpu(testing::example_candidate("relu_cuda.py"), "strict");
  EXPECT_EQ(r.outcome(), "correct") << r.context();
  EXPECT_TRUE(integrity_flags(r).empty()) << r.context();
  const auto& t = r.verdict["timing"];
  EXPECT_TRUE(t["sandbox_frozen"].get<bool>()) << r.context();
  ASSERT_TRUE(t.contains("busy_hop_share")) << r.context();
  EXPECT_LT(t["busy_hop_share"].get<double>(), 0.05) << r.context();
}

// Memory parked outside the model's objects is still the sandbox's device memory.
TEST(GpuStrict, MemoryParkedInTorchIsCounted) {
  auto r = eval_gpu(kHacks + "memory_parked_in_torch.py", "strict");
  EXPECT_EQ(r.outcome(), "correct") << r.context();
  ASSERT_TRUE(r.verdict.contains("memory")) << r.context();
  const auto& m = r.verdict["memory"];
  ASSERT_TRUE(m["candidate"].contains("process_bytes")) << r.context();
  EXPECT_GE(m["candidate"]["process_bytes"].get<std::int64_t>(), std::int64_t{1} << 30) << r.context();
  // 256 MiB of output against 256 MiB + the parked GiB: about 5x (candidate / baseline).
  EXPECT_GT(m["ratio_footprint"].get<double>(), 3.0) << "the gigabyte is in the footprint\n" << r.context();
}

}  // namespace
}  // namespace kbv
