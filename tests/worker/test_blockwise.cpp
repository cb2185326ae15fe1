// Block-by-block passes (judge/blockwise.hpp): every element once, no block over its bound, and
// the same counts as the whole-tensor expressions they replace, on any layout the judge meets (a
// transposed or expanded output, a row longer than a block, a scalar, nothing at all).
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <limits>

#include "judge/blockwise.hpp"
#include "judge/integrity.hpp"

namespace kbv::judge {
namespace {

// Adds 1 to every element of `t` through for_each_block's blocks; returns the largest block.
std::int64_t visit_each_once(at::Tensor t, std::int64_t max_elements) {
  std::int64_t largest = 0;
  for_each_block(
      {t},
      [&](const std::vector<at::Tensor>& block) {
        largest = std::max(largest, block[0].numel());
        block[0].add_(1);
      },
      max_elements);
  return largest;
}

TEST(Blockwise, EveryElementIsVisitedOnceAndNoBlockIsOverItsBound) {
  struct Case {
    const char* name;
    at::Tensor t;
    std::int64_t max;
  };
  const std::vector<Case> cases = {
      {"contiguous", at::zeros({37, 11}), 50},
      {"transposed", at::zeros({11, 37}).t(), 50},
      {"a row over the bound", at::zeros({3, 5, 40}), 17},
      {"bound of one", at::zeros({4, 3}), 1},
      {"smaller than a block", at::zeros({5}), 1000},
      {"scalar", at::zeros({}), 1},
      {"empty", at::zeros({0, 9}), 4},
  };
  for (const auto& c : cases) {
    const std::int64_t largest = visit_each_once(c.t, c.max);
    EXPECT_LE(largest, std::max<std::int64_t>(c.max, c.t.dim() == 0 ? 1 : 0)) << c.name;
    EXPECT_TRUE(c.t.eq(1).all().item<bool>()) << c.name << ": an element visited other than once";
  }
}

TEST(Blockwise, MatchingBlocksOfSeveralTensorsLineUp) {
  // A transposed view and a contiguous one of the same values: each block pair holds equal values.
  at::Tensor a = at::arange(6 * 29, at::kFloat).reshape({29, 6}).t();
  at::Tensor b = a.contiguous();
  std::int64_t seen = 0;
  for_each_block(
      {a, b},
      [&](const std::vector<at::Tensor>& block) {
        ASSERT_EQ(block[0].sizes(), block[1].sizes());
        EXPECT_TRUE(block[0].equal(block[1]));
        seen += block[0].numel();
      },
      7);
  EXPECT_EQ(seen, a.numel());
}

TEST(Blockwise, CountDifferentMatchesTheWholeTensorCountNaNEqualToNaN) {
  at::Tensor a = at::randn({13, 31});
  at::Tensor b = a.clone();
  b.view(-1).index_put_({at::arange(0, 403, 7)}, 5.0);  // 58 elements differ
  const double nan = std::numeric_limits<double>::quiet_NaN();
  a[3][4] = nan;
  b[3][4] = nan;  // the same NaN: not a difference
  a[9][1] = nan;  // NaN against a number: a difference (b[9][1] is a number)
  const std::int64_t whole = a.ne(b).logical_and(a.isnan().logical_and(b.isnan()).logical_not()).sum().item<std::int64_t>();
  for (std::int64_t max : {1, 5, 31, 64, 1 << 20}) EXPECT_EQ(count_different(a, b, max), whole) << max;
  EXPECT_EQ(count_different(a.t(), b.t(), 10), whole);
  at::Tensor i = at::randint(0, 3, {100}, at::kInt);
  EXPECT_EQ(count_different(i, i.flip(0), 9), i.ne(i.flip(0)).sum().item<std::int64_t>());
  EXPECT_EQ(count_different(at::empty({0}), at::empty({0})), 0);
}

TEST(Blockwise, LateWritesAndInputChangesAreFoundInTheLastBlockToo) {
  // The integrity checks read in blocks now: a write to the very last element still counts.
  at::Tensor out = at::randn({kBlockElements / 1024 + 3, 1024});
  at::Tensor snapshot = out.clone();
  out.view(-1)[out.numel() - 1] = 1e6;
  auto late = find_late_writes({snapshot}, {out});
  ASSERT_TRUE(late.has_value());
  EXPECT_NE(late->find("1 of"), std::string::npos) << *late;
  torch_host::ArgList pristine(1);
  pristine[0].is_tensor = true;
  pristine[0].tensor = snapshot;
  auto changed = find_input_mutation(pristine, {out});
  ASSERT_TRUE(changed.has_value());
  EXPECT_NE(changed->find("1 of"), std::string::npos) << *changed;
  EXPECT_FALSE(find_late_writes({snapshot}, {snapshot.clone()}).has_value());
}

}  // namespace
}  // namespace kbv::judge
