// Output comparison (src/worker/compare.*), on the CPU.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "torch_host/forward.hpp"
#include "judge/compare.hpp"

namespace kbv::judge {
using namespace kbv::torch_host;
namespace {

// The reason contains `part` (gtest alone; the worker tests do not link gmock).
::testing::AssertionResult has(const std::string& reason, const std::string& part) {
  if (reason.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "reason \"" << reason << "\" lacks \"" << part << "\"";
}

const Tolerance kTol{1e-3, 1e-3};

at::Tensor sample(at::IntArrayRef sizes = {16, 32}) {
  return at::linspace(-3.0, 3.0, c10::multiply_integers(sizes), at::kFloat).reshape(sizes);
}

TEST(Compare, IdenticalPasses) {
  at::Tensor r = sample();
  OutputComparison c = compare_outputs({r, r.sum()}, {r.clone(), r.sum().clone()}, kTol, true);
  EXPECT_TRUE(c.ok) << c.reason;
  EXPECT_EQ(c.reason, "");
  EXPECT_EQ(c.mismatched, 0);
  EXPECT_EQ(c.numel, r.numel() + 1);
  EXPECT_EQ(c.max_abs_err, 0.0);
  EXPECT_EQ(c.max_rel_err, 0.0);
}

TEST(Compare, ToleranceBoundaryIsInclusive) {
  // Powers of two: atol + rtol * |r| = 0.25 + 0.25 * 1 = 0.5 exactly.
  const Tolerance tol{0.25, 0.25};
  at::Tensor r = at::ones({4});
  OutputComparison at_bound = compare_outputs({r}, {r + 0.5}, tol, false);
  EXPECT_TRUE(at_bound.ok) << at_bound.reason;
  EXPECT_DOUBLE_EQ(at_bound.max_abs_err, 0.5);
  EXPECT_DOUBLE_EQ(at_bound.max_rel_err, 0.5);

  at::Tensor just_over = (r + 0.5).clone();
  just_over[2] = std::nextafter(1.5f, 2.0f);
  OutputComparison over = compare_outputs({r}, {just_over}, tol, false);
  EXPECT_FALSE(over.ok);
  EXPECT_EQ(over.mismatched, 1);
  EXPECT_TRUE(has(over.reason, "output 0: 1 of 4 elements outside atol=0.25 rtol=0.25"));
  EXPECT_TRUE(has(over.reason, "at index [2]"));

  // Negative side, and rtol scaling with |r|: r = -4 -> bound 0.25 + 1 = 1.25.
  at::Tensor r4 = at::full({1}, -4.0);
  EXPECT_TRUE(compare_outputs({r4}, {r4 - 1.25}, tol, false).ok);
  EXPECT_FALSE(compare_outputs({r4}, {r4 - 1.375}, tol, false).ok);
}

TEST(Compare, WorstIndexIsMultiDimensional) {
  at::Tensor r = at::zeros({8, 16});
  at::Tensor c = r.clone();
  c[3][7] = 2.0;
  c[5][1] = 0.5;
  c[0][0] = 1e-4;  // within tolerance
  OutputComparison out = compare_outputs({r}, {c}, kTol, false);
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.mismatched, 2);
  EXPECT_EQ(out.numel, 128);
  EXPECT_DOUBLE_EQ(out.max_abs_err, 2.0);
  EXPECT_DOUBLE_EQ(out.max_rel_err, 2.0 / 1e-3);
  EXPECT_EQ(out.reason,
            "output 0: 2 of 128 elements outside atol=0.001 rtol=0.001 (max abs err 2 at index [3, 7]: got 2 "
            "expected 0)");
}

TEST(Compare, CountMismatch) {
  at::Tensor r = sample();
  OutputComparison c = compare_outputs({r, r}, {r}, kTol, false);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.reason, "returned 1 outputs, expected 2");
}

TEST(Compare, ShapeMismatch) {
  OutputComparison c = compare_outputs({sample({2, 4})}, {sample({2, 3})}, kTol, false);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.reason, "output 0: shape [2, 3] expected [2, 4]");
  // A transposed result of the same numel is still a shape mismatch.
  at::Tensor r = sample({4, 8});
  EXPECT_EQ(compare_outputs({r}, {r.t()}, kTol, false).reason, "output 0: shape [8, 4] expected [4, 8]");
}

TEST(Compare, DtypeMismatch) {
  at::Tensor r = sample();
  OutputComparison c = compare_outputs({r, r}, {r, r.to(at::kHalf)}, kTol, false);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.reason, "output 1: dtype Half expected Float");
}

TEST(Compare, NoneOutput) {
  at::Tensor r = sample();
  OutputComparison c = compare_outputs({r}, {at::Tensor()}, kTol, false);
  EXPECT_FALSE(c.ok);
  EXPECT_TRUE(has(c.reason, "output 0: returned None"));
}

TEST(Compare, NaNInCandidateFails) {
  at::Tensor r = sample();
  at::Tensor c = r.clone();
  c[1][2] = std::numeric_limits<float>::quiet_NaN();
  OutputComparison loose = compare_outputs({r}, {c}, kTol, false);
  EXPECT_FALSE(loose.ok);
  EXPECT_EQ(loose.mismatched, 1);
  EXPECT_TRUE(has(loose.reason, "1 of 512 elements outside"));
  EXPECT_TRUE(has(loose.reason, "index [1, 2]: got nan"));
  EXPECT_EQ(loose.max_abs_err, 0.0);  // only both-finite elements count

  OutputComparison strict = compare_outputs({r}, {c}, kTol, true);
  EXPECT_FALSE(strict.ok);
  EXPECT_TRUE(has(strict.reason, "output 0: NaN/Inf pattern differs at 1 elements"));

  at::Tensor inf = r.clone();
  inf[0][0] = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(compare_outputs({r}, {inf}, kTol, false).ok);
}

TEST(Compare, NonFinitePatternMustMatchExactly) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  at::Tensor r = sample({4, 4});
  r[0][0] = nan;
  r[1][1] = inf;
  r[2][2] = -inf;
  at::Tensor same = r.clone();
  same[3][3] = same[3][3].item<float>() + 1e-4f;
  for (bool strict : {false, true}) {
    OutputComparison ok = compare_outputs({r}, {same}, kTol, strict);
    EXPECT_TRUE(ok.ok) << ok.reason;
    EXPECT_EQ(ok.mismatched, 0);
    EXPECT_TRUE(std::isfinite(ok.max_abs_err));
    EXPECT_NEAR(ok.max_abs_err, 1e-4, 1e-6);
  }
  // -inf where +inf is expected; a finite value where NaN is expected; NaN where -inf is.
  at::Tensor wrong = r.clone();
  wrong[1][1] = -inf;
  wrong[0][0] = 0.0;
  wrong[2][2] = nan;
  for (bool strict : {false, true}) {
    OutputComparison bad = compare_outputs({r}, {wrong}, kTol, strict);
    EXPECT_FALSE(bad.ok);
    EXPECT_EQ(bad.mismatched, 3);
    if (strict) {
      EXPECT_TRUE(has(bad.reason, "output 0: NaN/Inf pattern differs at 3 elements"));
    } else {
      EXPECT_TRUE(has(bad.reason, "3 of 16 elements outside"));
    }
  }
}

TEST(Compare, NonContiguousCandidate) {
  at::Tensor r = sample({6, 10});
  at::Tensor c = r.t().contiguous().t();  // same values, column-major strides
  ASSERT_FALSE(c.is_contiguous());
  EXPECT_TRUE(compare_outputs({r}, {c}, kTol, true).ok);

  c[4][9] = 100.0;  // through the view, into column-major storage
  OutputComparison bad = compare_outputs({r}, {c}, kTol, false);
  EXPECT_FALSE(bad.ok);
  EXPECT_TRUE(has(bad.reason, "at index [4, 9]"));

  at::Tensor expanded = at::ones({1, 5}).expand({3, 5});
  EXPECT_TRUE(compare_outputs({at::ones({3, 5})}, {expanded}, kTol, false).ok);
}

TEST(Compare, HalfAndIntegerOutputs) {
  at::Tensor r = sample().to(at::kHalf);
  EXPECT_TRUE(compare_outputs({r}, {r.clone()}, {1e-2, 1e-2}, false).ok);
  at::Tensor idx = at::arange(10, at::kLong);
  EXPECT_TRUE(compare_outputs({idx}, {idx.clone()}, kTol, false).ok);
  at::Tensor off = idx.clone();
  off[9] = 8;
  OutputComparison bad = compare_outputs({idx}, {off}, kTol, false);
  EXPECT_FALSE(bad.ok);
  EXPECT_TRUE(has(bad.reason, "index [9]: got 8 expected 9"));
}

TEST(Compare, LaterOutputsStillCountedAfterAFailure) {
  at::Tensor r = at::zeros({4});
  at::Tensor c0 = r.clone();
  c0[0] = 1.0;
  at::Tensor c1 = r.clone();
  c1[1] = 3.0;
  OutputComparison out = compare_outputs({r, r}, {c0, c1}, kTol, false);
  EXPECT_FALSE(out.ok);
  EXPECT_TRUE(has(out.reason, "output 0:"));
  EXPECT_EQ(out.mismatched, 2);
  EXPECT_EQ(out.numel, 8);
  EXPECT_DOUBLE_EQ(out.max_abs_err, 3.0);
}

// float32 outputs well inside the bound pass on the float32 screen: the errors it reports are the
// float64 comparison's to float32's precision.
TEST(Compare, ScreenedOutputsReportTheirErrors) {
  at::Tensor r = at::randn({1 << 16}, at::TensorOptions().dtype(at::kFloat)).mul_(10);
  at::Tensor bound = r.abs() * kTol.rtol + kTol.atol;
  at::Tensor c = r + (at::rand_like(r) * 2 - 1) * bound * 0.9;
  OutputComparison out = compare_outputs({r}, {c}, kTol, true);
  ASSERT_TRUE(out.ok) << out.reason;
  EXPECT_EQ(out.mismatched, 0);
  at::Tensor diff = (c.to(at::kDouble) - r.to(at::kDouble)).abs();
  const double max_abs = diff.max().item<double>();
  const double max_rel = (diff / r.to(at::kDouble).abs().clamp_min(kTol.atol)).max().item<double>();
  EXPECT_NEAR(out.max_abs_err, max_abs, max_abs * 1e-6);
  EXPECT_NEAR(out.max_rel_err, max_rel, max_rel * 1e-6);
}

// One element a float32 ulp past the bound among many well inside it: the screen cannot pass
// them, and the float64 comparison finds exactly that element.
TEST(Compare, OneElementJustPastTheBoundAmongManyInside) {
  const Tolerance tol{0.25, 0.25};
  at::Tensor r = at::ones({1 << 12});
  at::Tensor c = r + 0.1;
  c[77] = std::nextafter(1.5f, 2.0f);
  OutputComparison out = compare_outputs({r}, {c}, tol, false);
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.mismatched, 1);
  EXPECT_TRUE(has(out.reason, "at index [77]"));
  c[77] = 1.5f;  // on the bound: inclusive
  EXPECT_TRUE(compare_outputs({r}, {c}, tol, false).ok);
}

// outputs_match is compare_outputs(...).ok, whichever way the screen decides or leaves it:
// elements far inside, near and far past the bound, NaN and Inf patterns, narrow dtypes, float64,
// complex, structure.
TEST(Compare, OutputsMatchIsTheComparisonsOk) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  auto gen = at::make_generator<at::CPUGeneratorImpl>(7);
  int cases = 0;
  for (int trial = 0; trial < 60; ++trial) {
    at::Tensor r = at::randn({257}, gen, at::TensorOptions().dtype(at::kFloat)).mul_(trial % 5 == 0 ? 1e-4 : 3.0);
    at::Tensor bound = r.abs() * kTol.rtol + kTol.atol;
    // Within 0.5x, at 0.999999x .. 1.000001x, or at 3x the bound.
    const double scale = std::vector<double>{0.5, 0.999999, 1.0, 1.000001, 3.0}[trial % 5];
    at::Tensor c = r + at::rand({257}, gen, at::TensorOptions().dtype(at::kFloat)).mul_(2).sub_(1).mul_(bound * scale);
    switch (trial % 6) {
      case 1: r[3] = nan; c[3] = nan; break;        // matching NaN
      case 2: c[5] = nan; break;                    // NaN where the reference is finite
      case 3: r[9] = inf; c[9] = inf; break;        // matching Inf
      case 4: r[9] = inf; c[9] = -inf; break;       // opposite Inf
      case 5: c[11] = inf; break;
      default: break;
    }
    for (at::ScalarType dtype : {at::kFloat, at::kHalf, at::kBFloat16, at::kDouble}) {
      at::Tensor rt = r.to(dtype), ct = c.to(dtype);
      for (bool pattern : {false, true}) {
        ++cases;
        EXPECT_EQ(outputs_match({rt}, {ct}, kTol, pattern), compare_outputs({rt}, {ct}, kTol, pattern).ok)
            << "trial " << trial << " dtype " << dtype << " pattern " << pattern;
      }
    }
  }
  EXPECT_EQ(cases, 480);
  // Tolerances float32 cannot carry (red-team, session 15): rtol above 1 on values near float32's
  // largest, where |r| * rtol overflows in float32 and not in float64; a subnormal rtol.
  at::Tensor big = at::full({8}, 3.0e38f);
  at::Tensor off = big * 0.25f;  // 2.25e38 away from 3e38: inside rtol 2 (bound 6e38), outside rtol 0.5
  for (const Tolerance& t : {Tolerance{1e-3, 2.0}, Tolerance{1e-3, 0.5}, Tolerance{1e-3, 1e-40}, Tolerance{1e31, 1e-3}})
    EXPECT_EQ(outputs_match({big}, {off}, t, false), compare_outputs({big}, {off}, t, false).ok) << t.atol << " " << t.rtol;
  EXPECT_TRUE(compare_outputs({big}, {off}, Tolerance{1e-3, 2.0}, false).ok);
  EXPECT_FALSE(compare_outputs({big}, {off}, Tolerance{1e-3, 0.5}, false).ok);
  at::Tensor r = sample();
  EXPECT_TRUE(outputs_match({r, r.sum()}, {r.clone(), r.sum().clone()}, kTol, true));
  EXPECT_FALSE(outputs_match({r}, {r, r}, kTol, true));
  EXPECT_FALSE(outputs_match({r}, {r.reshape({32, 16})}, kTol, true));
  EXPECT_FALSE(outputs_match({r}, {r.to(at::kHalf)}, kTol, true));
  EXPECT_FALSE(outputs_match({r}, {at::Tensor()}, kTol, true));
  at::Tensor z = at::complex(r, r);
  EXPECT_TRUE(outputs_match({z}, {z.clone()}, kTol, true));
  EXPECT_FALSE(outputs_match({z}, {z * 2}, kTol, true));
}

// Outputs large enough to be screened by a sample first: outputs_match is still the comparison's
// ok, whether the one element past the bound is a sampled one, one between samples, or none.
TEST(Compare, OutputsMatchOnSampledOutputsIsTheComparisonsOk) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(11);
  const std::int64_t n = 300007;  // above the sample's threshold, and not a multiple of its stride
  const std::int64_t stride = n / (std::int64_t{1} << 16);
  at::Tensor r = at::randn({n}, gen, at::TensorOptions().dtype(at::kFloat));
  int cases = 0;
  for (std::int64_t where : {std::int64_t{0}, stride * 7, stride * 7 + 1, n - 1, std::int64_t{-1}}) {
    for (double past : {0.5, 3.0}) {  // inside the bound, or three times past it
      at::Tensor c = r.clone();
      if (where >= 0) c[where] = r[where] + (r[where].abs() * kTol.rtol + kTol.atol) * past;
      for (auto dtype : {at::kFloat, at::kHalf, at::kDouble}) {
        at::Tensor rt = r.to(dtype), ct = c.to(dtype);
        ++cases;
        EXPECT_EQ(outputs_match({rt}, {ct}, kTol, true), compare_outputs({rt}, {ct}, kTol, true).ok)
            << "at " << where << " past " << past << " dtype " << dtype;
      }
    }
  }
  EXPECT_EQ(cases, 30);
  at::Tensor far = r.clone();
  far[stride * 7 + 1] = 1e6;  // between samples: the whole output's screen finds it
  EXPECT_FALSE(outputs_match({r}, {far}, kTol, true));
  EXPECT_FALSE(outputs_match({r.reshape({-1, 1})}, {at::zeros({n, 1})}, kTol, true));
  EXPECT_TRUE(outputs_match({r, r}, {r.clone(), r.clone()}, kTol, true));
  EXPECT_FALSE(outputs_match({r, r}, {r.clone(), at::zeros_like(r)}, kTol, true));  // the second output
}

TEST(Compare, AllFinite) {
  at::Tensor r = sample();
  EXPECT_TRUE(all_finite({r, at::arange(4, at::kLong), at::Tensor()}));
  at::Tensor n = r.clone();
  n[0][0] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(all_finite({r, n}));
  at::Tensor i = r.to(at::kHalf);
  i[0][1] = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(all_finite({i}));
}

}  // namespace
}  // namespace kbv::judge
