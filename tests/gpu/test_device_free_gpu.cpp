// Device-free builds on the GPU machine (kbv run --overlap-builds): the build's sandbox must not
// reach the GPU even when the candidate's import sets CUDA_VISIBLE_DEVICES back and asks the
// driver itself; and a CUDA extension built that way is the one the evaluation loads.
#include <gtest/gtest.h>

#include "device_free_build.hpp"
#include "gpu_eval.hpp"

namespace kbv {
namespace {

TEST(DeviceFreeGpu, AnImportThatReachesForTheGpuFindsItOutOfReach) {
  auto r = testing::build_device_free(testing::fixture("reaches_for_the_gpu_at_import.py"), "reach");
  ASSERT_TRUE(r.verdict.is_object()) << r.context();
  EXPECT_EQ(r.verdict.value("stage", ""), "needs_device") << "the build's sandbox reached the GPU\n" << r.context();
}

// Built device-free for this GPU's architecture, then evaluated with the GPU from the same cache:
// correct, and the build is reused (the evaluation's build stage loads it, no compiler runs).
TEST(DeviceFreeGpu, AnExtensionBuiltWithoutTheGpuRunsOnIt) {
  // The H200's architecture; the evaluation's own build folder, which it then finds built.
  auto built = testing::build_device_free(testing::example_candidate("relu_cuda.py"), "relu", "9.0", testing::build_dir());
  ASSERT_EQ(built.verdict.value("stage", ""), "built") << built.context();
  auto r = testing::run_kbv_eval({kRelu, testing::example_candidate("relu_cuda.py"), "--protocol", "standard", "--time-budget", "0.5"},
                                 "cuda:0");
  EXPECT_EQ(r.outcome(), "correct") << r.context();
  ASSERT_TRUE(r.verdict.is_object()) << r.context();
  EXPECT_LT(r.verdict["build"].value("seconds", 1e9), 15.0) << "the evaluation compiled again\n" << r.context();
}

}  // namespace
}  // namespace kbv
