#include "orchestrate/evaluation_queue.hpp"

#include <map>

namespace kbv {

EvaluationQueue::EvaluationQueue(const std::vector<std::size_t>& jobs, const std::vector<std::string>& group_of) {
  std::map<std::string, std::size_t> index;  // group name -> place in groups_
  for (std::size_t j : jobs) {
    auto [it, added] = index.emplace(group_of.at(j), groups_.size());
    if (added) groups_.emplace_back();
    groups_[it->second].push_back(j);
  }
}

std::optional<std::vector<std::size_t>> EvaluationQueue::next_group() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (groups_.empty()) return std::nullopt;
  std::vector<std::size_t> group = std::move(groups_.front());
  groups_.pop_front();
  return group;
}

}  // namespace kbv
