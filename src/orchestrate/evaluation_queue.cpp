#include "orchestrate/evaluation_queue.hpp"

#include <algorithm>
#include <chrono>
#include <map>

namespace kbv {

EvaluationQueue::EvaluationQueue(const std::vector<std::size_t>& jobs, const std::vector<std::string>& group_of,
                                 const std::set<std::string>& pending) {
  std::map<std::string, std::size_t> index;  // group name -> place in groups_
  for (std::size_t j : jobs) {
    auto [it, added] = index.emplace(group_of.at(j), groups_.size());
    if (added) groups_.push_back({group_of.at(j), {}});
    groups_[it->second].jobs.push_back(j);
  }
  for (const auto& g : pending)
    if (index.count(g)) pending_.insert(g);
}

std::optional<std::vector<std::size_t>> EvaluationQueue::next_group(const std::atomic<bool>* stop) {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    auto it = std::find_if(groups_.begin(), groups_.end(), [&](const Group& g) { return !pending_.count(g.name); });
    if (it != groups_.end()) {
      std::vector<std::size_t> jobs = std::move(it->jobs);
      groups_.erase(it);
      return jobs;
    }
    if (groups_.empty() || pending_.empty() || (stop && *stop)) return std::nullopt;
    // A stop is a flag set from a signal handler, which cannot notify: look at it now and then.
    changed_.wait_for(lock, std::chrono::milliseconds(100));
  }
}

void EvaluationQueue::ready(const std::string& group) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_.erase(group);
  }
  changed_.notify_all();
}

void EvaluationQueue::dropped(const std::string& group) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_.erase(group);
    groups_.erase(std::remove_if(groups_.begin(), groups_.end(), [&](const Group& g) { return g.name == group; }), groups_.end());
  }
  changed_.notify_all();
}

void EvaluationQueue::close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    groups_.erase(std::remove_if(groups_.begin(), groups_.end(), [&](const Group& g) { return pending_.count(g.name) > 0; }),
                  groups_.end());
    pending_.clear();
  }
  changed_.notify_all();
}

}  // namespace kbv
