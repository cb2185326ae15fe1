// Strict without timing: the kinds its checked calls draw (src/judge/untimed_draws.*).
#include <gtest/gtest.h>

#include <set>

#include "judge/untimed_draws.hpp"

namespace kbv::judge {
namespace {

// Every kind is drawn within the first `kinds` calls, whatever the generator: a kind a wrong
// kernel passed once by chance is always met again (8 random picks of 8 kinds missed one
// kind 1 time in 3).
TEST(UntimedDraws, EveryKindBeforeAnyRepeats) {
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    std::mt19937_64 rng(seed);
    auto order = untimed_draw_order(8, 8, rng);
    ASSERT_EQ(order.size(), 8u);
    EXPECT_EQ(std::set<std::size_t>(order.begin(), order.end()).size(), 8u) << "seed " << seed;
  }
}

TEST(UntimedDraws, AtLeastTheMinimumAndEveryKindWhenThereAreMore) {
  std::mt19937_64 rng(1);
  auto few = untimed_draw_order(3, 8, rng);
  ASSERT_EQ(few.size(), 8u);
  EXPECT_EQ(std::set<std::size_t>(few.begin(), few.begin() + 3).size(), 3u);
  for (auto k : few) EXPECT_LT(k, 3u);
  auto many = untimed_draw_order(12, 8, rng);  // hidden-test lists add kinds
  EXPECT_EQ(std::set<std::size_t>(many.begin(), many.end()).size(), 12u);
}

// The order is private: two evaluations (different seeds) do not draw in the same order.
TEST(UntimedDraws, TheOrderFollowsTheGenerator) {
  std::set<std::vector<std::size_t>> orders;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    std::mt19937_64 rng(seed);
    orders.insert(untimed_draw_order(8, 8, rng));
  }
  EXPECT_GT(orders.size(), 15u);
}

}  // namespace
}  // namespace kbv::judge
