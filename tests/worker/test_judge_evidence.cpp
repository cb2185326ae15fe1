// The rules behind the flag judge_starved (judge/judge_evidence.cpp), on the CPU: which errors are
// an out-of-memory, and when the sandbox holds more than its share of the device.
#include <gtest/gtest.h>

#include "judge/judgement.hpp"

namespace kbv::judge {
namespace {

constexpr std::int64_t kGiB = std::int64_t{1} << 30;

TEST(JudgeStarved, OutOfMemoryIsRecognisedInEveryForm) {
  EXPECT_TRUE(is_out_of_memory("eager_tf32_on: Model.forward: OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"));
  EXPECT_TRUE(is_out_of_memory("D1_x1: CUDA error: out of memory"));
  EXPECT_TRUE(is_out_of_memory("CUBLAS_STATUS_ALLOC_FAILED when calling cublasCreate(handle)"));
  EXPECT_TRUE(is_out_of_memory("cudaErrorMemoryAllocation"));
  EXPECT_FALSE(is_out_of_memory("D1_x1: Model.forward: RuntimeError: mat1 and mat2 shapes cannot be multiplied"));
  EXPECT_FALSE(is_out_of_memory("value cannot be converted to type float without overflow"));
  EXPECT_FALSE(is_out_of_memory(""));
}

TEST(JudgeStarved, OnlyASandboxHoldingMoreThanItsShareIsBlamed) {
  // The red team's hoarder on the H200: the sandbox holds nearly everything.
  EXPECT_TRUE(sandbox_over_share({130 * kGiB, 6 * kGiB, 141 * kGiB}));
  // An honest candidate of a large problem holds less than the judge (its inputs are the judge's).
  EXPECT_FALSE(sandbox_over_share({30 * kGiB, 70 * kGiB, 141 * kGiB}));
  // A small judge does not make a small sandbox guilty: an eighth of the device is always its own.
  EXPECT_FALSE(sandbox_over_share({10 * kGiB, 1 * kGiB, 141 * kGiB}));
  EXPECT_TRUE(sandbox_over_share({20 * kGiB, 1 * kGiB, 141 * kGiB}));
  EXPECT_FALSE(sandbox_over_share({0, 0, 0}));
}

TEST(DeviceCrowded, OnlyOtherProcessesHoldingMoreThanTheCandidateMakeAnOutOfMemoryTheMachines) {
  // Twenty evaluations on one H100 (2026-12-06): others hold most of it, the candidate little.
  EXPECT_TRUE(others_crowd_device({1 * kGiB, 3 * kGiB, 79 * kGiB, 70 * kGiB}));
  // A hoarding candidate beside a busy device is still the hoarder: its own out-of-memory is its own.
  EXPECT_FALSE(others_crowd_device({60 * kGiB, 3 * kGiB, 79 * kGiB, 15 * kGiB}));
  // A little company does not excuse anything.
  EXPECT_FALSE(others_crowd_device({1 * kGiB, 3 * kGiB, 79 * kGiB, 5 * kGiB}));
  EXPECT_FALSE(others_crowd_device({0, 0, 0, 0}));
}

}  // namespace
}  // namespace kbv::judge
