#include "judge/untimed_draws.hpp"

#include <algorithm>
#include <numeric>

namespace kbv::judge {

std::vector<std::size_t> untimed_draw_order(std::size_t kinds, std::size_t min_calls, std::mt19937_64& rng) {
  std::vector<std::size_t> order(kinds);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::shuffle(order.begin(), order.end(), rng);
  if (kinds == 0) return order;
  while (order.size() < min_calls) order.push_back(rng() % kinds);
  return order;
}

}  // namespace kbv::judge
