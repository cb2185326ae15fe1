// Statistics: quantiles, the order-statistic CI of the median, the stopping rule, compare words.
// Expected values are worked out independently (by hand, or with exact integer binomial sums in
// Python), never by calling the code under test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "stats/compare.hpp"
#include "stats/median_ci.hpp"
#include "stats/stopping_rule.hpp"
#include "stats/summary.hpp"

namespace kbv::stats {
namespace {

// 1, 2, ..., n in a scrambled order, so x_(i) == i and a correct rank shows up as its value.
std::vector<double> ranks_shuffled(std::size_t n, unsigned seed = 7) {
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), 1.0);
  std::mt19937_64 rng(seed);
  std::shuffle(v.begin(), v.end(), rng);
  return v;
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---- quantile / summarize -------------------------------------------------------------------

TEST(Quantile, MatchesNumpyType7ByHand) {
  // Sorted: 1 1 2 3 4 5 6 9 (n = 8); h = 7q, x[floor h] + frac(h) * (next - x[floor h]).
  const std::vector<double> v{3, 1, 4, 1, 5, 9, 2, 6};
  EXPECT_DOUBLE_EQ(quantile(v, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(quantile(v, 0.1), 1.0);    // h = 0.7: between 1 and 1
  EXPECT_DOUBLE_EQ(quantile(v, 0.25), 1.75);  // h = 1.75: 1 + 0.75 * (2 - 1)
  EXPECT_DOUBLE_EQ(quantile(v, 0.5), 3.5);    // h = 3.5: 3 + 0.5 * (4 - 3)
  EXPECT_DOUBLE_EQ(quantile(v, 0.75), 5.25);  // h = 5.25: 5 + 0.25 * (6 - 5)
  EXPECT_DOUBLE_EQ(quantile(v, 0.9), 6.9);    // h = 6.3: 6 + 0.3 * (9 - 6)
  EXPECT_DOUBLE_EQ(quantile(v, 1.0), 9.0);
}

TEST(Quantile, ExactRankAndInterpolation) {
  const std::vector<double> v{50, 10, 40, 20, 30};
  EXPECT_DOUBLE_EQ(quantile(v, 0.25), 20.0);  // h = 1 exactly
  EXPECT_DOUBLE_EQ(quantile(v, 0.3), 22.0);   // h = 1.2
  EXPECT_DOUBLE_EQ(quantile(v, 0.5), 30.0);
  EXPECT_DOUBLE_EQ(quantile(std::vector<double>{-3, -1}, 0.5), -2.0);
  EXPECT_DOUBLE_EQ(quantile(std::vector<double>{7}, 0.3), 7.0);
}

TEST(Quantile, RejectsEmptyNaNAndBadQ) {
  const std::vector<double> v{1, 2, 3};
  EXPECT_THROW(quantile(std::vector<double>{}, 0.5), std::invalid_argument);
  EXPECT_THROW(quantile(v, -0.1), std::invalid_argument);
  EXPECT_THROW(quantile(v, 1.1), std::invalid_argument);
  EXPECT_THROW(quantile(v, kNaN), std::invalid_argument);
  EXPECT_THROW(quantile(std::vector<double>{1, kNaN, 3}, 0.5), std::invalid_argument);
}

TEST(StatsSummary, HandComputedValues) {
  // Sorted 2 4 4 4 5 5 7 9: mean 5, squared deviations sum to 32, sample variance 32/7.
  const std::vector<double> v{5, 9, 4, 2, 7, 4, 5, 4};
  Summary s = summarize(v);
  EXPECT_EQ(s.n, 8u);
  EXPECT_DOUBLE_EQ(s.min, 2.0);
  EXPECT_DOUBLE_EQ(s.max, 9.0);
  EXPECT_DOUBLE_EQ(s.median, 4.5);  // h = 3.5 between 4 and 5
  EXPECT_DOUBLE_EQ(s.q1, 4.0);      // h = 1.75 between 4 and 4
  EXPECT_DOUBLE_EQ(s.q3, 5.5);      // h = 5.25: 5 + 0.25 * (7 - 5)
  EXPECT_DOUBLE_EQ(s.mean, 5.0);
  EXPECT_NEAR(s.stddev, std::sqrt(32.0 / 7.0), 1e-12);
}

TEST(StatsSummary, SingleSampleAndTinySpread) {
  Summary one = summarize(std::vector<double>{3.25});
  EXPECT_EQ(one.n, 1u);
  EXPECT_DOUBLE_EQ(one.median, 3.25);
  EXPECT_DOUBLE_EQ(one.stddev, 0.0);
  // Spread of 1e-6 on a mean of 1e6: the one-pass sum-of-squares formula loses it entirely.
  Summary s = summarize(std::vector<double>{1e6 - 1e-6, 1e6, 1e6 + 1e-6});
  EXPECT_NEAR(s.stddev, 1e-6, 1e-9);
}

TEST(StatsSummary, AgreesWithQuantileAndThrowsOnEmpty) {
  std::mt19937_64 rng(11);
  std::lognormal_distribution<double> d(0.0, 0.5);
  std::vector<double> v(101);
  for (auto& x : v) x = d(rng);
  Summary s = summarize(v);
  EXPECT_DOUBLE_EQ(s.median, quantile(v, 0.5));
  EXPECT_DOUBLE_EQ(s.q1, quantile(v, 0.25));
  EXPECT_DOUBLE_EQ(s.q3, quantile(v, 0.75));
  EXPECT_THROW(summarize(std::vector<double>{}), std::invalid_argument);
}

// ---- median_ci ------------------------------------------------------------------------------

struct RankCase {
  std::size_t n;
  double confidence;
  double low, high;  // 1-based ranks of the order statistics
};

TEST(MedianCi, ExactOrderStatisticRanks) {
  // Largest k with 1 - 2 P(B <= k-1) >= confidence, B ~ Binomial(n, 1/2), from exact integer
  // sums: n = 10 -> (2, 9) coverage 1002/1024; n = 100 -> (40, 61) coverage 0.9648.
  const RankCase cases[] = {
      {6, 0.95, 1, 6},
      {10, 0.95, 2, 9},
      {10, 0.80, 3, 8},
      {20, 0.95, 6, 15},
      {25, 0.95, 8, 18},
      {100, 0.95, 40, 61},
      {100, 0.99, 37, 64},
      {1000, 0.95, 469, 532},
      {10000, 0.95, 4902, 5099},
      {100000, 0.95, 49690, 50311},
      {100000, 0.99, 49593, 50408},
  };
  for (const auto& c : cases) {
    Interval ci = median_ci(ranks_shuffled(c.n), c.confidence);
    EXPECT_EQ(ci.low, c.low) << "n=" << c.n << " conf=" << c.confidence;
    EXPECT_EQ(ci.high, c.high) << "n=" << c.n << " conf=" << c.confidence;
  }
}

TEST(MedianCi, TooFewSamplesGiveMinMax) {
  for (std::size_t n = 2; n <= 5; ++n) {  // 1 - 2/2^n < 0.95 for n <= 5
    Interval ci = median_ci(ranks_shuffled(n));
    EXPECT_EQ(ci.low, 1.0) << n;
    EXPECT_EQ(ci.high, static_cast<double>(n)) << n;
  }
  Interval one = median_ci(std::vector<double>{4.5});
  EXPECT_EQ(one.low, 4.5);
  EXPECT_EQ(one.high, 4.5);
}

TEST(MedianCi, ExactTieMeetsConfidence) {
  // Coverage of (2, 9) at n = 10 is exactly 1 - 22/1024; asking for precisely that must keep it,
  // and asking for a hair more must fall back to (1, 10).
  const double exact = 1.0 - 22.0 / 1024.0;
  Interval ci = median_ci(ranks_shuffled(10), exact);
  EXPECT_EQ(ci.low, 2.0);
  EXPECT_EQ(ci.high, 9.0);
  ci = median_ci(ranks_shuffled(10), exact + 1e-6);
  EXPECT_EQ(ci.low, 1.0);
  EXPECT_EQ(ci.high, 10.0);
}

TEST(MedianCi, MillionsOfSamplesMatchNormalApproximation) {
  // Binomial(n, 1/2) is symmetric, so the continuity-corrected normal approximation is accurate
  // to O(1/n) in probability; the largest m with P(B <= m) <= 0.025 is then
  // floor(n/2 - 0.5 - z sqrt(n)/2), z = 1.959964, and the rank k = m + 1. For these n the floor
  // is 0.4-0.5 ranks away from an integer (~5e-5 in probability), far beyond that error. The
  // exact sum must neither overflow nor underflow here.
  for (std::size_t n : {std::size_t{1000000}, std::size_t{2000000}}) {
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<double>(n - i);  // descending
    Interval ci = median_ci(v);
    const double nd = static_cast<double>(n);
    const double k = std::floor(nd / 2 - 0.5 - 1.959964 * std::sqrt(nd) / 2) + 1;
    EXPECT_EQ(ci.low, k) << "n=" << n;  // 499020 and 998614
    EXPECT_EQ(ci.high, nd - k + 1) << "n=" << n;
  }
}

TEST(MedianCi, CoverageBySimulationOnSkewedData) {
  // Lognormal(0, 1) has median exactly 1; exponential(1) has median ln 2. Exact coverages of
  // the chosen ranks (from the binomial): n=10 0.9785, n=25 0.9567, n=100 0.9648. With 4000
  // trials the standard error is about 0.003, so 0.015 is a wide but meaningful band; an
  // interval that always returned [min, max] would show ~1.0 and fail.
  struct Case {
    std::size_t n;
    double exact_coverage;
  };
  const Case cases[] = {{10, 0.978515625}, {25, 0.9567147}, {100, 0.9647998}};
  std::mt19937_64 rng(20261130);
  std::lognormal_distribution<double> lognormal(0.0, 1.0);
  std::exponential_distribution<double> expo(1.0);
  const int trials = 4000;
  for (const auto& c : cases) {
    int hits_lognormal = 0, hits_expo = 0;
    std::vector<double> a(c.n), b(c.n);
    for (int t = 0; t < trials; ++t) {
      for (auto& x : a) x = lognormal(rng);
      for (auto& x : b) x = expo(rng);
      Interval ia = median_ci(a), ib = median_ci(b);
      hits_lognormal += (ia.low <= 1.0 && 1.0 <= ia.high);
      hits_expo += (ib.low <= std::log(2.0) && std::log(2.0) <= ib.high);
    }
    const double cov_a = static_cast<double>(hits_lognormal) / trials;
    const double cov_b = static_cast<double>(hits_expo) / trials;
    EXPECT_GE(cov_a, 0.94) << "n=" << c.n;
    EXPECT_GE(cov_b, 0.94) << "n=" << c.n;
    EXPECT_NEAR(cov_a, c.exact_coverage, 0.015) << "n=" << c.n;
    EXPECT_NEAR(cov_b, c.exact_coverage, 0.015) << "n=" << c.n;
  }
}

TEST(MedianCi, RejectsEmptyNaNAndBadConfidence) {
  const std::vector<double> v{1, 2, 3, 4, 5, 6, 7};
  EXPECT_THROW(median_ci(std::vector<double>{}), std::invalid_argument);
  EXPECT_THROW(median_ci(std::vector<double>{1, kNaN, 2}), std::invalid_argument);
  EXPECT_THROW(median_ci(v, 0.0), std::invalid_argument);
  EXPECT_THROW(median_ci(v, 1.0), std::invalid_argument);
  EXPECT_THROW(median_ci(v, 95.0), std::invalid_argument);  // a percentage by mistake
}

TEST(MedianCi, RelativeHalfWidth) {
  EXPECT_DOUBLE_EQ(relative_half_width({0.9, 1.1}, 1.0), 0.1);
  EXPECT_DOUBLE_EQ(relative_half_width({1.8, 2.2}, 2.0), 0.1);
  EXPECT_TRUE(std::isinf(relative_half_width({-0.1, 0.1}, 0.0)));
}

// ---- stopping rule --------------------------------------------------------------------------

std::vector<double> tight_ratios(std::size_t n) {  // 1.0 +- 0.1%
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> d(0.999, 1.001);
  std::vector<double> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

std::vector<double> noisy_ratios(std::size_t n) {  // 1.0 +- 50%
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> d(0.5, 1.5);
  std::vector<double> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

TEST(StoppingRule, DecisionNames) {
  EXPECT_EQ(stop_decision_name(StopDecision::keep_going), "running");
  EXPECT_EQ(stop_decision_name(StopDecision::converged), "converged");
  EXPECT_EQ(stop_decision_name(StopDecision::budget), "budget");
}

TEST(StoppingRule, NeedsMinimumRoundsAndTime) {
  StoppingRule rule;  // 20 rounds, 0.1 s
  auto v = tight_ratios(20);
  EXPECT_EQ(should_stop(rule, std::span(v).first(19), 1.0), StopDecision::keep_going);
  EXPECT_EQ(should_stop(rule, v, 1.0), StopDecision::converged);
  EXPECT_EQ(should_stop(rule, v, 0.05), StopDecision::keep_going);
  EXPECT_EQ(should_stop(rule, {}, 1.0), StopDecision::keep_going);
  rule.min_rounds = 0;  // still must not ask median_ci about nothing
  EXPECT_EQ(should_stop(rule, {}, 1.0), StopDecision::keep_going);
}

TEST(StoppingRule, TargetThresholdIsApplied) {
  // 101..120: median 110.5, 95% CI at n = 20 is (x_6, x_15) = (106, 115), half-width 4.5,
  // relative 4.5 / 110.5 = 0.0407.
  std::vector<double> v(20);
  std::iota(v.begin(), v.end(), 101.0);
  StoppingRule rule;
  rule.target_rel_half_width = 0.041;
  EXPECT_EQ(should_stop(rule, v, 1.0), StopDecision::converged);
  rule.target_rel_half_width = 0.040;
  EXPECT_EQ(should_stop(rule, v, 1.0), StopDecision::keep_going);
}

TEST(StoppingRule, NoisyDataKeepsGoingUntilBudget) {
  StoppingRule rule;
  auto v = noisy_ratios(200);
  EXPECT_EQ(should_stop(rule, v, 1.0), StopDecision::keep_going);
  EXPECT_EQ(should_stop(rule, v, 10.0), StopDecision::budget);
  EXPECT_EQ(should_stop(rule, v, 25.0), StopDecision::budget);
  rule.max_rounds = 200;
  EXPECT_EQ(should_stop(rule, v, 1.0), StopDecision::budget);
  EXPECT_EQ(should_stop(rule, std::span(v).first(199), 1.0), StopDecision::keep_going);
}

TEST(StoppingRule, ConvergedTakesPrecedenceOverBudget) {
  StoppingRule rule;
  rule.max_rounds = 50;
  auto v = tight_ratios(50);
  EXPECT_EQ(should_stop(rule, v, 30.0), StopDecision::converged);
  // Converged also needs min_seconds: a budget below it can only end in "budget".
  rule.min_seconds = 1.0;
  rule.budget_seconds = 0.5;
  EXPECT_EQ(should_stop(rule, v, 0.6), StopDecision::budget);
}

TEST(StoppingRule, ZeroMedianNeverConverges) {
  StoppingRule rule;
  std::vector<double> v(100, 0.0);
  EXPECT_EQ(should_stop(rule, v, 1.0), StopDecision::keep_going);
}

// ---- compare --------------------------------------------------------------------------------

TEST(CompareSpeedup, Words) {
  EXPECT_EQ(compare_speedup({1.05, 1.10}), "FASTER");
  EXPECT_EQ(compare_speedup({0.80, 0.90}), "SLOWER");
  EXPECT_EQ(compare_speedup({0.995, 1.005}), "SAME");
  EXPECT_EQ(compare_speedup({0.99, 1.01}), "SAME");  // band edges are inside
  EXPECT_EQ(compare_speedup({0.90, 1.10}), "UNSURE");
  EXPECT_EQ(compare_speedup({0.995, 1.02}), "UNSURE");  // straddles 1, leaves the band
}

TEST(CompareSpeedup, BandDecidesSameVersusFaster) {
  const Interval ci{1.005, 1.02};  // above 1 but partly outside +-1%
  EXPECT_EQ(compare_speedup(ci), "FASTER");
  EXPECT_EQ(compare_speedup(ci, 0.05), "SAME");
  EXPECT_EQ(compare_speedup({1.002, 1.008}), "SAME");  // above 1, too close to matter
  EXPECT_EQ(compare_speedup({1.002, 1.008}, 0.0), "FASTER");
  EXPECT_EQ(compare_speedup({kNaN, kNaN}), "UNSURE");
}

}  // namespace
}  // namespace kbv::stats
