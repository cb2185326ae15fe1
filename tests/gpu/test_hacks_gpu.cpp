// The CUDA-only hacks of examples/hacks/ under strict (and not caught under standard), and the
// honest CUDA controls that must get no integrity flag.
#include <gtest/gtest.h>

#include <set>

#include "kbv_cli.hpp"

namespace kbv {
namespace {

using testing::CliResult;

const std::string kHacks = testing::kSource + "/examples/hacks/";
const std::string kRelu = testing::example_problem("19_ReLU.py");

CliResult eval_gpu(const std::string& candidate, const std::string& protocol, const std::string& problem = kRelu) {
  // A short run limit: a hack that wedges the worker must cost minutes, not the whole session.
  return testing::run_kbv_eval({problem, candidate, "--protocol", protocol, "--time-budget", "1", "--run-timeout", "120"},
                               "cuda:0");
}

std::set<std::string> integrity_flags(const CliResult& r) {
  std::set<std::string> names;
  if (r.verdict.is_object())
    for (const auto& f : r.verdict["flags"]) {
      std::string n = f["name"];
      if (n != "no_custom_kernel" && n != "degenerate") names.insert(n);
    }
  return names;
}

struct GpuHack {
  std::string file;
  std::string flag;
};

class GpuStrictHack : public ::testing::TestWithParam<GpuHack> {};

TEST_P(GpuStrictHack, CaughtUnderStrictNotUnderStandard) {
  const auto& c = GetParam();
  auto strict = eval_gpu(kHacks + c.file, "strict");
  EXPECT_TRUE(integrity_flags(strict).count(c.flag)) << strict.context();
  EXPECT_EQ(strict.outcome(), "incorrect") << strict.context();
  auto standard = eval_gpu(kHacks + c.file, "standard");
  EXPECT_TRUE(integrity_flags(standard).empty()) << standard.context();
}

INSTANTIATE_TEST_SUITE_P(CudaHacks, GpuStrictHack,
                         ::testing::Values(GpuHack{"side_stream.py", "unsynchronized_work"},
                                           GpuHack{"side_stream_full_grid.py", "unsynchronized_work"},
                                           GpuHack{"side_stream_thread_launch.py", "unsynchronized_work"},
                                           GpuHack{"persisting_l2.py", "persisting_l2"}),
                         [](const ::testing::TestParamInfo<GpuHack>& info) {
                           std::string n = info.param.file.substr(0, info.param.file.size() - 3);
                           for (auto& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

// The demo corpus's side-stream GELU (its stream does not even wait for the input): on the H200
// it went unflagged while the audit's marker was a kernel.
TEST(GpuStrict, DemoGamerSideStreamGeluIsFlagged) {
  auto r = eval_gpu(testing::kSource + "/runs/demo-gamer/level_1_problem_8_sample_0_kernel.py", "strict",
                    testing::kSource + "/problems/level1/8_GELU.py");
  EXPECT_EQ(r.outcome(), "incorrect") << r.context();
  EXPECT_TRUE(integrity_flags(r).count("unsynchronized_work")) << r.context();
}

TEST(GpuStrict, StaleMemoryReadsPoison) {
  auto r = eval_gpu(kHacks + "stale_memory.py", "strict");
  EXPECT_EQ(r.outcome(), "incorrect") << r.context();
  EXPECT_TRUE(integrity_flags(r).count("stale_memory")) << r.context();
}

TEST(GpuStrict, HonestOwnStreamJoinedGetsNoFlag) {
  auto r = eval_gpu(kHacks + "honest_own_stream.py", "strict");
  EXPECT_EQ(r.outcome(), "correct") << r.context();
  EXPECT_TRUE(integrity_flags(r).empty()) << r.context();
}

TEST(GpuStrict, HonestFusedSwishGetsNoFlagAndItsKernelIsSeen) {
  auto r = eval_gpu(testing::example_candidate("swish_cuda.py"), "strict", testing::example_problem("7_Swish.py"));
  EXPECT_EQ(r.outcome(), "correct") << r.context();
  EXPECT_TRUE(integrity_flags(r).empty()) << r.context();
  for (const auto& f : r.verdict["flags"]) EXPECT_NE(f["name"], "no_custom_kernel") << r.context();
}

TEST(GpuStrict, PyTorchOnlyRewriteIsFlaggedNoCustomKernel) {
  auto r = eval_gpu(kHacks + "no_custom_kernel.py", "strict", testing::example_problem("40_Linear_ReLU.py"));
  bool found = false;
  for (const auto& f : r.verdict["flags"]) found |= f["name"] == "no_custom_kernel";
  EXPECT_TRUE(found) << r.context();
}

}  // namespace
}  // namespace kbv
