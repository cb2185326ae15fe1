// The timing phase's warm-up rule (judge/timing_rules.hpp): a round is stable when every
// callable's sample is within kWarmStableRel of its sample the round before, or of its rolling
// median's the round before (WarmupStability).
#include <gtest/gtest.h>

#include <vector>

#include "judge/timing_rules.hpp"

namespace kbv::judge {
namespace {

TEST(WarmRoundStable, EveryCallableWithinTheBandOfItsLastSample) {
  EXPECT_TRUE(warm_round_stable({1.0, 0.30, 0.28}, {1.05, 0.29, 0.28}));
  EXPECT_TRUE(warm_round_stable({1.0, 0.30, 0.28}, {1.0 * (1 + kWarmStableRel / 2), 0.30, 0.28}));
}

TEST(WarmRoundStable, OneCallableOutsideTheBandIsNotStable) {
  // A first call that loads modules or tunes is many times slower than the next.
  EXPECT_FALSE(warm_round_stable({12.0, 0.30, 0.28}, {1.0, 0.30, 0.28}));
  EXPECT_FALSE(warm_round_stable({1.0, 0.30, 0.28}, {1.0, 0.30, 0.28 * (1 + 2 * kWarmStableRel)}));
  EXPECT_FALSE(warm_round_stable({1.0, 0.30, 0.28}, {1.0, 0.30 * (1 - 2 * kWarmStableRel), 0.28}));
}

TEST(WarmRoundStable, NoEarlierRoundOrNoTimeIsNotStable) {
  EXPECT_FALSE(warm_round_stable({}, {1.0, 0.3}));
  EXPECT_FALSE(warm_round_stable({1.0}, {1.0, 0.3}));
  EXPECT_FALSE(warm_round_stable({0.0, 0.3}, {0.0, 0.3}));
  EXPECT_FALSE(warm_round_stable({}, {}));
}

// Feeds `rounds` to a fresh WarmupStability: the 1-based round it first says warm-up may end, or 0.
int warm_up_ends_at(const std::vector<std::vector<double>>& rounds) {
  WarmupStability rule;
  for (std::size_t r = 0; r < rounds.size(); ++r)
    if (rule.add(rounds[r])) return static_cast<int>(r + 1);
  return 0;
}

TEST(WarmupStability, StableSamplesEndItAfterTwoStableRounds) {
  // The first call is slow; rounds 2-4 agree: rounds 3 and 4 are stable against the round before.
  EXPECT_EQ(warm_up_ends_at({{12.0, 0.30}, {1.0, 0.30}, {1.02, 0.30}, {1.01, 0.31}}), 4);
}

TEST(WarmupStability, SpikesInEveryOtherRoundStillEndIt) {
  // A loaded CPU: every round one callable's sample is 3-10x off (each callable's in one round of
  // three), so no two rounds in a row agree; the rolling median of three does not see a lone
  // spike (a CI run of the timing-rounds test went on for 594 rounds without it).
  std::vector<std::vector<double>> rounds = {{5.0, 3.0, 2.0}};
  for (int r = 0; r < 30; ++r) {
    std::vector<double> round = {1.0, 0.3, 0.25};
    round[r % 3] *= (r % 2) ? 3 : 10;
    rounds.push_back(round);
  }
  const int ends = warm_up_ends_at(rounds);
  EXPECT_GT(ends, 0);
  EXPECT_LE(ends, 8);
  // Without the medians: each round differs from the one before in two callables.
  int raw_stable = 0;
  for (std::size_t r = 1; r < rounds.size(); ++r) raw_stable += warm_round_stable(rounds[r - 1], rounds[r]);
  EXPECT_EQ(raw_stable, 0);
}

TEST(WarmupStability, ASlowStartOrADriftDoesNotEndIt) {
  // Two slow first rounds (a handle, then a tuning pass): the first windows' medians are slow.
  EXPECT_EQ(warm_up_ends_at({{12.0, 0.3}, {9.0, 0.3}, {1.0, 0.3}, {1.0, 0.3}}), 0);
  // A callable whose time keeps falling by 15% a round, the other jittering by 12%.
  std::vector<std::vector<double>> drifting;
  double t = 10;
  for (int r = 0; r < 20; ++r, t *= 0.85) drifting.push_back({t, r % 2 ? 0.3 : 0.3 * 1.12});
  EXPECT_EQ(warm_up_ends_at(drifting), 0);
}

TEST(WarmupStability, ResetForgetsEveryEarlierRound) {
  WarmupStability rule;
  for (int r = 0; r < 2; ++r) EXPECT_FALSE(rule.add({1.0, 0.3}));
  rule.reset();
  EXPECT_FALSE(rule.add({1.0, 0.3}));
  EXPECT_FALSE(rule.add({1.0, 0.3}));
  EXPECT_TRUE(rule.add({1.0, 0.3}));
}


// No speedup rests on the floor (issue 33): a call that ends within 2 us of the hop is credited
// the floor, and a candidate with half its samples there is never FASTER.
TEST(FloorSamples, CallsWithinTheFloorOfTheHopAreCounted) {
  const double hop = 0.290;
  EXPECT_EQ(floor_samples({0.290, 0.2915, 0.2919, 0.300, 0.500}, hop, false), 3);
  EXPECT_EQ(floor_samples({0.100, 0.289}, hop, false), 2);  // below the hop: at most the floor
  EXPECT_EQ(floor_samples({0.295, 0.400}, hop, false), 0);
}

TEST(FloorSamples, SamplesKeptWholeBelowTheHopAreNotAtTheFloor) {
  // A call that ran no kernel in its context is kept whole (an upper bound), not credited 2 us.
  EXPECT_EQ(floor_samples({0.010, 0.011}, 0.290, true), 0);
}

TEST(RestsOnFloor, HalfTheSamplesOrMore) {
  EXPECT_TRUE(rests_on_floor(10, 20));
  EXPECT_TRUE(rests_on_floor(20, 20));
  EXPECT_FALSE(rests_on_floor(9, 20));
  EXPECT_FALSE(rests_on_floor(0, 0));
}

}  // namespace
}  // namespace kbv::judge
