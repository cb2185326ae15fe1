// The numerics model's rule (src/judge/numerics.*), on the CPU: a sum of cancelling terms in
// float64 (the truth), in eager fp32, in another fp32 order (honest), with one term dropped and
// in bfloat16 (both wrong); and what the tolerance check sends its way.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <limits>

#include "judge/compare.hpp"
#include "judge/numerics.hpp"

namespace kbv::judge {
namespace {

// Rows of +-1e4 pairs (shuffled) plus small noise: sums of order 1 from terms of order 1e4.
at::Tensor cancelling_rows(std::int64_t rows = 16, std::int64_t n = 1 << 14) {
  at::manual_seed(7);
  at::Tensor v = at::randn({rows, n / 2}) * 1e4;
  at::Tensor x = at::cat({v, -v.flip(1)}, 1) + at::randn({rows, n}) * 1e-2;
  return x.index_select(1, at::randperm(n));
}

at::Tensor blocked_sum(const at::Tensor& x) { return x.reshape({x.size(0), -1, 256}).sum(-1).sum(-1); }

TEST(Numerics, AnotherFp32OrderIsWithinEagersError) {
  at::Tensor x = cancelling_rows();
  at::Tensor truth = x.to(at::kDouble).sum(1), eager = x.sum(1), honest = blocked_sum(x);
  ASSERT_FALSE(compare_outputs({eager}, {honest}, {1e-3, 1e-3}, false).ok)
      << "the two orders must disagree beyond the tolerance, or this test shows nothing";
  NumericsCheck n = check_numerics({truth}, {eager}, {honest});
  EXPECT_TRUE(n.within) << n.candidate_max_abs_err << " vs eager " << n.eager_max_abs_err;
  EXPECT_GT(n.eager_max_abs_err, 0.0);
  EXPECT_GT(n.candidate_rms_err, 0.0);
}

TEST(Numerics, ADroppedTermIsFarOutside) {
  at::Tensor x = cancelling_rows();
  at::Tensor wrong = blocked_sum(x) - x.select(1, 3);
  NumericsCheck n = check_numerics({x.to(at::kDouble).sum(1)}, {x.sum(1)}, {wrong});
  EXPECT_FALSE(n.within);
  EXPECT_GT(n.candidate_max_abs_err, 100 * n.eager_max_abs_err);
}

TEST(Numerics, ALowerPrecisionIsFarOutside) {
  at::Tensor x = cancelling_rows();
  at::Tensor low = blocked_sum(x.to(at::kBFloat16).to(at::kFloat));
  EXPECT_FALSE(check_numerics({x.to(at::kDouble).sum(1)}, {x.sum(1)}, {low}).within);
}

// The second output drops one term (~1e4); the first is honest: the verdict is the worse one's.
TEST(Numerics, OneBadOutputOfTwoFails) {
  at::Tensor x = cancelling_rows();
  at::Tensor truth = x.to(at::kDouble).sum(1), eager = x.sum(1);
  EXPECT_FALSE(check_numerics({truth, truth}, {eager, eager}, {blocked_sum(x), blocked_sum(x) - x.select(1, 3)}).within);
}

TEST(Numerics, IntegerOutputsAreNotANumericsMatter) {
  at::Tensor i = at::arange(10);
  NumericsCheck n = check_numerics({i.to(at::kDouble)}, {i}, {i + 1});
  EXPECT_FALSE(n.within);
  EXPECT_FALSE(n.note.empty());
}

// Only a finite-value tolerance failure reaches the numerics model: a NaN where the reference is
// finite, or a wrong shape, is not a question of summation order.
TEST(Numerics, OnlyToleranceFailuresAreSentOn) {
  at::Tensor r = at::ones({8});
  at::Tensor off = r + 0.5;
  EXPECT_TRUE(compare_outputs({r}, {off}, {1e-3, 1e-3}, false).tolerance_only);
  at::Tensor nan = r.clone();
  nan[2] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(compare_outputs({r}, {nan}, {1e-3, 1e-3}, false).tolerance_only);
  EXPECT_FALSE(compare_outputs({r}, {at::ones({9})}, {1e-3, 1e-3}, false).tolerance_only);
  EXPECT_FALSE(compare_outputs({r}, {r, r}, {1e-3, 1e-3}, false).tolerance_only);
}

}  // namespace
}  // namespace kbv::judge
