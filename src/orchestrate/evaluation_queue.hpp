#pragma once
// The evaluation phase's work list, by device. A device takes a candidate's jobs (its
// protocols) all together, so two devices never evaluate one candidate at the same time: its
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
  // need not be adjacent: a group is taken in the order its first job appears).
  EvaluationQueue(const std::vector<std::size_t>& jobs, const std::vector<std::string>& group_of, std::size_t devices);

  // The next job for `device`: the rest of the group it holds, else the next group. nullopt:
  // nothing is left for it.
  std::optional<std::size_t> next(std::size_t device);

 private:
  std::mutex mutex_;
  std::deque<std::vector<std::size_t>> groups_;      // not taken yet
  std::vector<std::deque<std::size_t>> held_;         // per device: the rest of its group
};

}  // namespace kbv
