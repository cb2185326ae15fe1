// The rules behind the flag judge_starved (judge/judge_evidence.cpp), on the CPU: which errors are
// an out-of-memory, and when the sandbox holds more than its share of the device.
#include <gtest/gtest.h>

#include "judge/judgement.hpp"
#include "torch_host/memory.hpp"

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

// The note gives the allocator's figures at the failure only for the failure the reason names:
// the sizes are written as torch's caching allocator writes them in its message.
TEST(OomBlame, AllocatorSizesAreWrittenAsTorchsMessageWritesThem) {
  EXPECT_EQ(torch_host::allocator_size_text(512), "512 bytes");
  EXPECT_EQ(torch_host::allocator_size_text(1024), "1024 bytes");
  EXPECT_EQ(torch_host::allocator_size_text(3 * 1024), "3.00 KiB");
  EXPECT_EQ(torch_host::allocator_size_text(std::int64_t{20} << 20), "20.00 MiB");
  EXPECT_EQ(torch_host::allocator_size_text(std::int64_t{1} << 30), "1024.00 MiB");
  EXPECT_EQ(torch_host::allocator_size_text(std::int64_t{12} << 30), "12.00 GiB");
  EXPECT_EQ(torch_host::allocator_size_text(7088373760), "6.60 GiB");  // session 29's "Tried to allocate 6.60 GiB"
}

TEST(OomBlame, TheJudgesOwnShortfallIsKbvsNeverTheProblemsOnceModelRanAtItsSize) {
  // Session 27 on an 80 GB H100: the judge's copies at KernelBench's sizes; the candidate small.
  const DeviceHolders judge_heavy{1 * kGiB, 70 * kGiB, 79 * kGiB, 0};
  // get_inputs() in the timing rounds, after Model had run at this size: kbv's, not the problem's.
  EXPECT_EQ(oom_blame(Outcome::problem_error, true, judge_heavy, true), OomBlame::judge);
  // The problem's first get_inputs() or Model.forward: the problem does not fit the device.
  EXPECT_EQ(oom_blame(Outcome::problem_error, true, judge_heavy, false), OomBlame::as_it_stands);
  // kbv's own step (a snapshot, a comparison) ran short: kbv's, whether or not Model ran.
  EXPECT_EQ(oom_blame(Outcome::internal_error, true, judge_heavy, false), OomBlame::judge);
  EXPECT_EQ(oom_blame(Outcome::internal_error, true, std::nullopt, true), OomBlame::judge);
  // Without an out-of-memory nothing moves.
  EXPECT_EQ(oom_blame(Outcome::problem_error, false, judge_heavy, true), OomBlame::as_it_stands);
}

TEST(OomBlame, AHoardingSandboxIsBlamedFirstAndACrowdedDeviceBeforeTheJudge) {
  const DeviceHolders hoarder{60 * kGiB, 10 * kGiB, 79 * kGiB, 0};
  EXPECT_EQ(oom_blame(Outcome::internal_error, true, hoarder, true), OomBlame::candidate);
  EXPECT_EQ(oom_blame(Outcome::problem_error, true, hoarder, false), OomBlame::candidate);
  const DeviceHolders crowded{1 * kGiB, 3 * kGiB, 79 * kGiB, 70 * kGiB};
  EXPECT_EQ(oom_blame(Outcome::problem_error, true, crowded, true), OomBlame::others);
  EXPECT_EQ(oom_blame(Outcome::internal_error, true, crowded, false), OomBlame::others);
  // The candidate's own out-of-memory stays its own, unless others crowd the device.
  EXPECT_EQ(oom_blame(Outcome::runtime_error, true, hoarder, true), OomBlame::as_it_stands);
  EXPECT_EQ(oom_blame(Outcome::runtime_error, true, crowded, true), OomBlame::others);
  // A verdict that is no error is never moved.
  EXPECT_EQ(oom_blame(Outcome::incorrect, true, hoarder, true), OomBlame::as_it_stands);
}

TEST(OomBlame, AnHonestCandidatesAllowanceIsTwiceTheReferencesWeightsAndPeakAndAProcesssOwn) {
  EXPECT_EQ(hoard_allowance(0, 0), kHonestProcessBytes);
  EXPECT_EQ(hoard_allowance(1 * kGiB, 3 * kGiB), kHonestProcessBytes + 8 * kGiB);
  EXPECT_EQ(hoard_allowance(-5, 3 * kGiB), kHonestProcessBytes + 6 * kGiB);
}

// hoard_under_share.py on a problem whose tensors are an eighth of an 80 GB H100 (9.90 GiB), as
// measured on one (2026-12-07, bench/h100-2026-12-07-s30): it held less than the judge, so the
// share rule let it be, and the judge's next draw failed.
TEST(OomBlame, AHoardBelowTheShareIsTheCandidatesWhenItsExcessWouldHaveCoveredTheJudgesShortfall) {
  const std::int64_t tensor = 9 * kGiB + kGiB * 9 / 10;
  const DeviceHolders under_share{37 * kGiB, 40 * kGiB, 79 * kGiB, 0};
  ASSERT_FALSE(sandbox_over_share(under_share));
  const std::int64_t allowance = hoard_allowance(0, tensor);  // 20.3 GiB
  // It held 37.2 GiB; the judge lacked 9.4 GiB: without the 16.9 GiB above the allowance it
  // would have fit.
  const HoardEvidence hoard{37 * kGiB + kGiB / 5, allowance, 9 * kGiB + kGiB * 2 / 5};
  EXPECT_TRUE(hoard_starved_judge(hoard));
  EXPECT_EQ(oom_blame(Outcome::internal_error, true, under_share, true, hoard), OomBlame::candidate);
  EXPECT_EQ(oom_blame(Outcome::problem_error, true, under_share, true, hoard), OomBlame::candidate);
  // At a seventh (11.31 GiB) it held 31.9 GiB and the judge lacked 11.15 GiB: 8.8 GiB above the
  // allowance would not have covered it. The judge's need and an honest allowance do not fit the
  // device together (the honest ReLU itself ran the judge short there): kbv's.
  const std::int64_t seventh = 11 * kGiB + kGiB * 31 / 100;
  const HoardEvidence at_a_seventh{31 * kGiB + kGiB * 9 / 10, hoard_allowance(0, seventh), 11 * kGiB + kGiB * 15 / 100};
  EXPECT_FALSE(hoard_starved_judge(at_a_seventh));
  EXPECT_EQ(oom_blame(Outcome::internal_error, true, DeviceHolders{32 * kGiB, 46 * kGiB, 79 * kGiB, 0}, true, at_a_seventh),
            OomBlame::judge);
  // Without the hoard's evidence the judge's shortfall is kbv's, as before.
  EXPECT_EQ(oom_blame(Outcome::internal_error, true, under_share, true), OomBlame::judge);
  // A shortfall larger than the excess would not have fit beside an honest candidate either: kbv's.
  EXPECT_FALSE(hoard_starved_judge({37 * kGiB, allowance, 17 * kGiB}));
  EXPECT_EQ(oom_blame(Outcome::internal_error, true, under_share, true, HoardEvidence{37 * kGiB, allowance, 17 * kGiB}), OomBlame::judge);
  // An honest candidate holds its outputs, its weights and its allocator's cache: within the
  // allowance, whatever the judge lacked.
  EXPECT_EQ(oom_blame(Outcome::internal_error, true, under_share, true, HoardEvidence{2 * tensor, allowance, 1}), OomBlame::judge);
  // The candidate's own out-of-memory stays its own runtime_error.
  EXPECT_EQ(oom_blame(Outcome::runtime_error, true, under_share, true, hoard), OomBlame::as_it_stands);
}

// A few hundred MiB over the allowance is no hoard, even where the judge lacked less than that
// (an unknown shortfall, a library's own allocation, counts as none): the floor is the bar.
TEST(OomBlame, AnExcessBelowTheFloorIsNoHoard) {
  const std::int64_t allowance = hoard_allowance(0, kGiB);
  EXPECT_FALSE(hoard_starved_judge({allowance + (200 << 20), allowance, 50 << 20}));
  EXPECT_FALSE(hoard_starved_judge({allowance + (200 << 20), allowance, 0}));
  EXPECT_TRUE(hoard_starved_judge({allowance + kHoardFloorBytes, allowance, 0}));
  EXPECT_TRUE(hoard_starved_judge({allowance + 2 * kGiB, allowance, kGiB}));
}

// Beside other processes that crowd the device, the hoard is the cause only when it is the larger
// (an H200 shared with another job); otherwise kbv evaluates again on a device with room.
TEST(OomBlame, BesideACrowdOnlyAHoardLargerThanTheCrowdIsTheCandidates) {
  const DeviceHolders light_company{25 * kGiB, 30 * kGiB, 141 * kGiB, 10 * kGiB};
  const DeviceHolders crowd_of_40{25 * kGiB, 30 * kGiB, 141 * kGiB, 40 * kGiB};
  ASSERT_FALSE(sandbox_over_share(light_company));
  ASSERT_FALSE(others_crowd_device(light_company));
  ASSERT_TRUE(others_crowd_device(crowd_of_40));
  const std::int64_t allowance = hoard_allowance(0, 5 * kGiB);
  const HoardEvidence hoard{25 * kGiB, allowance, 5 * kGiB};  // 14.5 GiB above its allowance
  EXPECT_EQ(oom_blame(Outcome::internal_error, true, light_company, true, hoard), OomBlame::candidate);
  EXPECT_EQ(oom_blame(Outcome::internal_error, true, crowd_of_40, true, hoard), OomBlame::others);
}

}  // namespace
}  // namespace kbv::judge
