#include "orchestrate/evaluation_queue.hpp"

#include <map>

namespace kbv {

EvaluationQueue::EvaluationQueue(const std::vector<std::size_t>& jobs, const std::vector<std::string>& group_of, std::size_t devices)
    : held_(devices) {
  std::map<std::string, std::size_t> index;  // group name -> place in groups_
  for (std::size_t j : jobs) {
    auto [it, added] = index.emplace(group_of.at(j), groups_.size());
    if (added) groups_.emplace_back();
    groups_[it->second].push_back(j);
  }
}

std::optional<std::size_t> EvaluationQueue::next(std::size_t device) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& held = held_.at(device);
  if (held.empty()) {
    if (groups_.empty()) return std::nullopt;
    held.assign(groups_.front().begin(), groups_.front().end());
    groups_.pop_front();
  }
  std::size_t job = held.front();
  held.pop_front();
  return job;
}

}  // namespace kbv
