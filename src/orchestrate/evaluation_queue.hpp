#pragma once
// The evaluation phase's work list: a candidate's jobs (its protocols) are handed out together,
// to one judge whose one sandbox serves them all (and, should it stop early, to the judges after
// it on the same device). So two devices never evaluate one candidate at the same time: its
// build cache entry is handed to one sandbox at a time (a second sandbox taking it over would cut
// the first one's access while it loads the library). Every job is handed out exactly once.
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kbv {

class EvaluationQueue {
 public:
  // `jobs` in the order to evaluate them; `group_of[j]` names job j's candidate (jobs of one group
  // need not be adjacent: a group is taken in the order its first job appears, its jobs in the
  // order given).
  EvaluationQueue(const std::vector<std::size_t>& jobs, const std::vector<std::string>& group_of);

  // The next candidate's jobs. nullopt: nothing is left.
  std::optional<std::vector<std::size_t>> next_group();

 private:
  std::mutex mutex_;
  std::deque<std::vector<std::size_t>> groups_;  // not taken yet
};

}  // namespace kbv
