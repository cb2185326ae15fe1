// The degenerate-output audit (problem_audit.hpp): which trivial output passes as the reference.
// A large reference is ruled out on a sample before any full-size trivial output is made; the
// sample must never change the answer the full comparison gives.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "cpu_memory_peak.hpp"
#include "judge/problem_audit.hpp"

namespace kbv::judge {
namespace {

constexpr std::int64_t kLarge = std::int64_t{1} << 22;  // 16 MiB of float32: past the sampled size
const Tolerance kTol{1e-3, 1e-3};

at::Tensor randn(std::int64_t n, std::uint64_t seed) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  return at::randn({n}, gen, at::TensorOptions().dtype(at::kFloat));
}

std::string audit(const at::Tensor& ref) { return trivial_pass({ref}, {}, kTol, true); }

TEST(ProblemAudit, ARandomReferenceIsMatchedByNoTrivialOutput) { EXPECT_EQ(audit(randn(kLarge, 1)), ""); }

TEST(ProblemAudit, ZerosAndAConstantAreFoundAtLargeSizes) {
  EXPECT_EQ(audit(at::zeros({kLarge}, at::kFloat)), "zeros");
  EXPECT_EQ(audit(at::full({kLarge}, 3.25f, at::kFloat)), "constant");
  // Within tolerance of one value everywhere, though no two elements are equal.
  EXPECT_EQ(audit(randn(kLarge, 2).mul_(1e-4f).add_(7.0f)), "constant");
  EXPECT_EQ(audit(randn(kLarge, 3).mul_(1e-5f)), "zeros");
}

// What the sample misses the full comparison still finds: a reference that is zero at every
// sampled element but not elsewhere, and one constant on the sample with an outlier between.
TEST(ProblemAudit, WhatTheSampleMissesTheFullComparisonFinds) {
  at::Tensor ref = at::zeros({kLarge}, at::kFloat);
  ref[1] = 5.0f;  // the sample takes every 64th element from 0
  EXPECT_EQ(audit(ref), "");
  at::Tensor flat = at::full({kLarge}, 2.0f, at::kFloat);
  flat[kLarge - 3] = -40.0f;
  EXPECT_EQ(audit(flat), "");
}

// Elements outside the sample's finite values do not make it rule anything out wrongly: a NaN or an
// infinity in the sample is left out of it, and the full comparison decides as before.
TEST(ProblemAudit, NonFiniteElementsAreLeftToTheFullComparison) {
  at::Tensor ref = at::full({kLarge}, 1.5f, at::kFloat);
  ref[0] = std::numeric_limits<float>::quiet_NaN();
  ref[64] = std::numeric_limits<float>::infinity();
  EXPECT_EQ(trivial_pass({ref}, {}, kTol, true), "");   // the pattern of non-finite elements must match
  at::Tensor huge = at::full({kLarge}, std::numeric_limits<float>::max(), at::kFloat);
  EXPECT_EQ(audit(huge), "constant");  // the mean overflows float: still an answer
}

// Two outputs: ruled out by either.
TEST(ProblemAudit, EachOutputCanRuleOutATrivialOutput) {
  EXPECT_EQ(trivial_pass({at::zeros({kLarge}, at::kFloat), randn(kLarge, 4)}, {}, kTol, true), "");
  EXPECT_EQ(trivial_pass({at::zeros({kLarge}, at::kFloat), at::zeros({kLarge}, at::kFloat)}, {}, kTol, true), "zeros");
}

// The point of the sample: a discriminating reference costs no full-size trivial output. Before it,
// the audit held a zero tensor and then a constant one of the reference's size (and the mean's
// float64 blocks).
TEST(ProblemAudit, ADiscriminatingReferenceIsAuditedWithoutAFullSizeTrivialOutput) {
  const at::Tensor ref = randn(kLarge, 5);
  const at::Tensor negated = ref.neg();  // the first input, not the output: the input test fails on its sample too
  std::int64_t peak = 0;
  std::string answer;
  {
    test::CpuMemoryPeak memory;
    torch_host::ArgList inputs(1);
    inputs[0].is_tensor = true;
    inputs[0].tensor = negated;
    answer = trivial_pass({ref}, inputs, kTol, true);
    peak = memory.peak_bytes();
  }
  EXPECT_EQ(answer, "");
  EXPECT_LT(peak, kLarge * 4 / 4) << peak << " bytes held at most; the reference is " << kLarge * 4;
}

}  // namespace
}  // namespace kbv::judge
