// GPU tests that need the device to themselves (ctest RUN_SERIAL): whether the sandbox's context
// left work on the GPU while the judge timed the baselines is judged against the null call of an
// idle device, and another evaluation on the same GPU is not idle.
#include <gtest/gtest.h>

#include <cstdint>

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
