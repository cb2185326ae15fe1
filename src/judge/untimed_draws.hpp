#pragma once
// Strict without timing makes the checked calls timing would have made. Which distribution kind
// each call draws: every kind once, in a private order, before any kind repeats, so a kind a
// wrong kernel passed by chance in the correctness phase (a subset whose sparse_spike spikes
// balanced) is always drawn again.
#include <cstddef>
#include <random>
#include <vector>

namespace kbv::judge {

// Indices into `kinds` kinds for max(min_calls, kinds) calls.
std::vector<std::size_t> untimed_draw_order(std::size_t kinds, std::size_t min_calls, std::mt19937_64& rng);

}  // namespace kbv::judge
