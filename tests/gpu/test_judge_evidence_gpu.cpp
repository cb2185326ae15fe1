// Issue 34 on the GPU: the candidate's memory figure is the driver's per-process reading (a relay
// that rewrites the sandbox's `memory` answer to 0 changes nothing but the cross-check), and a
// candidate that takes the device's memory so that the judge runs short gets its own outcome,
// never problem_error or internal_error. The CPU halves are in
// tests/integration/test_judge_evidence_cli.cpp.
#include <gtest/gtest.h>

#include "gpu_eval.hpp"

namespace kbv {
namespace {

const std::string kAttacks = testing::kSource + "/examples/attacks/";

std::set<std::string> all_flags(const CliResult& r) {
  std::set<std::string> names;
  if (r.verdict.is_object())
    for (const auto& f : r.verdict["flags"]) names.insert(f["name"].get<std::string>());
  return names;
}

TEST(GpuJudgeEvidence, StarvingTheJudgeOfDeviceMemoryIsTheCandidatesOutcome) {
  for (const std::string protocol : {"verified", "strict"}) {
    SCOPED_TRACE(protocol);
    auto r = eval_gpu(kAttacks + "starve_judge_device_memory.py", protocol);
    ASSERT_TRUE(r.verdict.is_object()) << r.context();
    EXPECT_NE(r.outcome(), "problem_error") << r.context();
    EXPECT_NE(r.outcome(), "internal_error") << r.context();
    EXPECT_NE(r.outcome(), "correct") << r.context();
    // Where the judge itself ran short, the verdict names it; where it did not (its allocator's
    // cache served it), the zeros are simply incorrect.
    if (r.outcome() == "runtime_error") EXPECT_TRUE(all_flags(r).count("judge_starved")) << r.context();
    else EXPECT_EQ(r.outcome(), "incorrect") << r.context();
  }
}

TEST(GpuJudgeEvidence, ARelaysZeroMemoryIsNotTheFigure) {
  auto r = eval_gpu(testing::bundled_attack("relay_forges_answers"), "strict");
  ASSERT_TRUE(r.verdict.is_object()) << r.context();
  EXPECT_FALSE(r.verdict["custom_kernel"].get<bool>()) << r.context();
  EXPECT_TRUE(all_flags(r).count("sandbox_account_differs")) << r.context();
  ASSERT_TRUE(r.verdict.contains("memory")) << r.context();
  const auto& candidate = r.verdict["memory"]["candidate"];
  EXPECT_EQ(candidate["peak_device_bytes"].get<std::int64_t>(), 0) << "the relay's figure, kept as the sandbox's account";
  ASSERT_TRUE(candidate.contains("process_bytes")) << r.context();
  EXPECT_GT(candidate["process_bytes"].get<std::int64_t>(), 0) << "the driver's figure\n" << r.context();
}

TEST(GpuJudgeEvidence, HonestCudaCandidatesKeepTheirFiguresAndNoNewFlag) {
  for (const std::string candidate : {"relu_cuda.py", "relu_raw_scratch.py"}) {
    SCOPED_TRACE(candidate);
    auto r = eval_gpu(testing::example_candidate(candidate), "strict");
    EXPECT_EQ(r.outcome(), "correct") << r.context();
    EXPECT_TRUE(r.verdict["custom_kernel"].get<bool>()) << r.context();
    const auto flags = all_flags(r);
    EXPECT_FALSE(flags.count("sandbox_account_differs")) << r.context();
    EXPECT_FALSE(flags.count("lower_precision")) << r.context();
    EXPECT_FALSE(flags.count("judge_starved")) << r.context();
    ASSERT_TRUE(r.verdict.contains("memory")) << r.context();
    EXPECT_TRUE(r.verdict["memory"]["candidate"].contains("process_bytes")) << r.context();
  }
}

TEST(GpuJudgeEvidence, HalfPrecisionReluIsCaughtByStrictOnTheGpu) {
  auto r = eval_gpu(kHacks + "half_precision_relu.py", "strict");
  EXPECT_EQ(r.outcome(), "incorrect") << r.context();
  EXPECT_TRUE(all_flags(r).count("lower_precision")) << r.context();
}

}  // namespace
}  // namespace kbv
