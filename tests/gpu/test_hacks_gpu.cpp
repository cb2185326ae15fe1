// The CUDA-only hacks of examples/hacks/ against the judge/sandbox split, and the honest CUDA
// controls that must get no integrity flag.
//
// A candidate now runs in its own process; the judge's end-of-call event runs in the judge's CUDA
// context, which the GPU does not resume while the sandbox's context still has work (contexts are
// time-sliced). So side-stream work lands inside the candidate's own sample, or, when it outlasts
// a time slice, is still writing when the judge snapshots the outputs. Either way the hack gains
// nothing: it is incorrect, flagged, or timed honestly (no inflated speedup), under every
// protocol, standard included.
#include <gtest/gtest.h>

#include <set>

#include "gpu_eval.hpp"

namespace kbv {
namespace {

class GpuSideStreamHack : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuSideStreamHack, GainsNothingUnderAnyProtocol) {
  for (const std::string protocol : {"standard", "strict"}) {
    SCOPED_TRACE(protocol);
    expect_no_gain(eval_gpu(kHacks + GetParam(), protocol));
  }
}

INSTANTIATE_TEST_SUITE_P(CudaHacks, GpuSideStreamHack,
                         ::testing::Values("side_stream.py", "side_stream_full_grid.py", "side_stream_thread_launch.py",
                                           "persisting_l2.py"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param.substr(0, info.param.size() - 3);
                           for (auto& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

// The demo corpus's side-stream GELU (its stream does not even wait for the input).
TEST(GpuStrict, DemoGamerSideStreamGeluGainsNothing) {
  auto r = eval_gpu(testing::kSource + "/runs/demo-gamer/level_1_problem_8_sample_0_kernel.py", "strict",
                    testing::kSource + "/problems/level1/8_GELU.py");
  expect_no_gain(r);
}

TEST(GpuStrict, StaleMemoryFindsNoReference) {
  // The reference's outputs live in the judge's process: there is nothing stale to find.
  auto r = eval_gpu(kHacks + "stale_memory.py", "strict");
  EXPECT_EQ(r.outcome(), "incorrect") << r.context();
}

TEST(GpuStrict, HonestOwnStreamJoinedGetsNoFlag) {
  auto r = eval_gpu(kHacks + "honest_own_stream.py", "strict");
  EXPECT_EQ(r.outcome(), "correct") << r.context();
  EXPECT_TRUE(integrity_flags(r).empty()) << r.context();
}

TEST(GpuStrict, HonestFusedSwishGetsNoFlagAndItsSpeedup) {
  auto r = eval_gpu(testing::example_candidate("swish_cuda.py"), "strict", testing::example_problem("7_Swish.py"));
  EXPECT_EQ(r.outcome(), "correct") << r.context();
  EXPECT_TRUE(integrity_flags(r).empty()) << r.context();
  for (const auto& f : r.verdict["flags"]) EXPECT_NE(f["name"], "no_custom_kernel") << r.context();
  // 3.2x in one process before the split (bench/RESULTS.md); the hop must not distort it.
  EXPECT_NEAR(headline_speedup(r), 3.22, 0.15) << r.context();
  EXPECT_TRUE(r.verdict["timing"]["gated"].get<bool>()) << r.context();
}

TEST(GpuStrict, PyTorchOnlyRewriteIsFlaggedNoCustomKernel) {
  auto r = eval_gpu(kHacks + "no_custom_kernel.py", "strict", testing::example_problem("40_Linear_ReLU.py"));
  bool found = false;
  for (const auto& f : r.verdict["flags"]) found |= f["name"] == "no_custom_kernel";
  EXPECT_TRUE(found) << r.context();
}

}  // namespace
}  // namespace kbv
