// The CUDA half of the examples' contract (examples/README.md): the real kbv binary on the H200.
#include <gtest/gtest.h>

#include "kbv_cli.hpp"

namespace kbv {
namespace {

using testing::CliResult;
using testing::example_candidate;
using testing::example_problem;

CliResult run_gpu(std::vector<std::string> args) { return testing::run_kbv_eval(std::move(args), "cuda:0"); }

const nlohmann::json* speedup_vs(const nlohmann::json& verdict, const std::string& baseline) {
  for (const auto& s : verdict["timing"]["speedups"])
    if (s["baseline"] == baseline) return &s;
  return nullptr;
}

TEST(EvalGpu, FusedSwishIsCorrectFasterAndCarriesBothBaselinesAndMemory) {
  auto r = run_gpu({example_problem("7_Swish.py"), example_candidate("swish_cuda.py")});
  ASSERT_EQ(r.outcome(), "correct") << r.context();
  const auto& timing = r.verdict["timing"];
  EXPECT_EQ(timing["clock"], "cuda_events");
  EXPECT_TRUE(timing["l2_flush"].get<bool>());
  EXPECT_GE(timing["l2_flush_bytes"].get<std::int64_t>(), 2 * r.verdict["device"]["l2_bytes"].get<std::int64_t>());
  const auto* on = speedup_vs(r.verdict, "eager_tf32_on");
  const auto* off = speedup_vs(r.verdict, "eager_tf32_off");
  ASSERT_TRUE(on && off) << r.context();
  EXPECT_LE((*on)["ci_low"].get<double>(), (*on)["median"].get<double>());
  EXPECT_GE((*on)["ci_high"].get<double>(), (*on)["median"].get<double>());
  EXPECT_GT((*on)["ci_low"].get<double>(), 1.2) << "one fused kernel against eager's three";
  const auto& memory = r.verdict["memory"];
  EXPECT_GT(memory["baseline"]["peak_allocated_bytes"].get<std::int64_t>(), 0);
  EXPECT_GT(memory["ratio_device"].get<double>(), 0.0);
}

// A kernel that reads shared memory it never wrote is a bug even where that memory happens to
// be zero: the sandbox scrubs it before every call, so the unguarded reduction is incorrect and
// its guarded twin is not.
TEST(EvalGpu, ReadingUnwrittenSharedMemoryIsIncorrect) {
  const std::string rmsnorm = testing::kSource + "/problems/level1/15_RMSNorm.py";
  for (const std::string protocol : {"standard", "strict"}) {
    auto bug = run_gpu({rmsnorm, example_candidate("rmsnorm_unguarded_shared.py"), "--protocol", protocol});
    EXPECT_EQ(bug.outcome(), "incorrect") << bug.context();
    auto guarded = run_gpu({rmsnorm, example_candidate("rmsnorm_cuda.py"), "--protocol", protocol});
    EXPECT_EQ(guarded.outcome(), "correct") << guarded.context();
  }
}

TEST(EvalGpu, RawScratchAllocationShowsInDeviceMemory) {
  auto r = run_gpu({example_problem("19_ReLU.py"), example_candidate("relu_raw_scratch.py")});
  ASSERT_EQ(r.outcome(), "correct") << r.context();
  const auto& m = r.verdict["memory"];
  std::int64_t extra = m["candidate"]["peak_device_bytes"].get<std::int64_t>() - m["baseline"]["peak_device_bytes"].get<std::int64_t>();
  EXPECT_GE(extra, 1LL << 30) << "the 1 GiB cudaMalloc inside the extension: " << m.dump();
  EXPECT_LT(m["candidate"]["peak_allocated_bytes"].get<std::int64_t>(), 1LL << 30) << "the allocator cannot see it";
}

TEST(EvalGpu, ShapeShortcutPassesStandardFailsVerified) {
  auto standard = run_gpu({example_problem("19_ReLU.py"), example_candidate("relu_shape_shortcut.py"), "--protocol", "standard"});
  EXPECT_EQ(standard.outcome(), "correct") << standard.context();
  auto verified = run_gpu({example_problem("19_ReLU.py"), example_candidate("relu_shape_shortcut.py"), "--protocol", "verified"});
  EXPECT_EQ(verified.outcome(), "incorrect") << verified.context();
  EXPECT_NE(verified.reason().find("D4_neg"), std::string::npos);
}

TEST(EvalGpu, WrongCudaKernelIsIncorrect) {
  auto r = run_gpu({example_problem("19_ReLU.py"), example_candidate("relu_wrong.py")});
  EXPECT_EQ(r.outcome(), "incorrect") << r.context();
}

TEST(EvalGpu, IllegalAddressIsRecordedAndKbvSurvives) {
  auto r = run_gpu({example_problem("19_ReLU.py"), example_candidate("relu_illegal_address.py")});
  EXPECT_TRUE(r.outcome() == "runtime_error" || r.outcome() == "crashed") << r.context();
  EXPECT_EQ(r.process.exit_code, 0);
}

TEST(EvalGpu, HangIsKilledAtTheRunLimit) {
  auto r = run_gpu({example_problem("19_ReLU.py"), example_candidate("relu_hang.py"), "--run-timeout", "20"});
  EXPECT_EQ(r.outcome(), "timeout") << r.context();
  EXPECT_EQ(r.process.exit_code, 0);
}

TEST(EvalGpu, SegfaultIsCrashed) {
  auto r = run_gpu({example_problem("19_ReLU.py"), example_candidate("relu_crash_segfault.py")});
  EXPECT_EQ(r.outcome(), "crashed") << r.context();
}

TEST(EvalGpu, LinearReluWithWeightsIsCorrect) {
  auto r = run_gpu({example_problem("40_Linear_ReLU.py"), example_candidate("linear_relu_cuda.py")});
  EXPECT_EQ(r.outcome(), "correct") << r.context();
}

}  // namespace
}  // namespace kbv
