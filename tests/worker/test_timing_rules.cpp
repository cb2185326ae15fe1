// The timing phase's warm-up rule (judge/timing_rules.hpp): a round is stable when every
// callable's sample is within kWarmStableRel of its sample the round before.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace kbv::judge
