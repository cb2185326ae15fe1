#pragma once
// The evaluation phase's work list: a candidate's jobs (its protocols) are handed out together,
// to one judge whose one sandbox serves them all (and, should it stop early, to the judges after
// it on the same device). So two devices never evaluate one candidate at the same time: its
// build cache entry is handed to one sandbox at a time (a second sandbox taking it over would cut
// the first one's access while it loads the library). Every job is handed out exactly once.
//
// With builds overlapping the evaluation (kbv run --overlap-builds), a candidate still being
// built is pending: it is held back until its build says ready() (or dropped(), a failed build
// whose verdicts are already kept), and next_group() waits for it.
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kbv {

class EvaluationQueue {
 public:
  // `jobs` in the order to evaluate them; `group_of[j]` names job j's candidate (jobs of one group
  // need not be adjacent: a group is taken in the order its first job appears, its jobs in the
  // order given). `pending`: groups not to hand out before ready().
  EvaluationQueue(const std::vector<std::size_t>& jobs, const std::vector<std::string>& group_of,
                  const std::set<std::string>& pending = {});

  // The first ready candidate's jobs, waiting while only pending ones are left. nullopt: nothing
  // is left, or `stop` became true while waiting.
  std::optional<std::vector<std::size_t>> next_group(const std::atomic<bool>* stop = nullptr);

  void ready(const std::string& group);    // its build is done: hand it out
  void dropped(const std::string& group);  // its build failed: never hand it out
  // No more ready() or dropped() will come (the builds stopped): what is still pending is never
  // handed out, and waiters return.
  void close();

 private:
  struct Group {
    std::string name;
    std::vector<std::size_t> jobs;
  };
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Group> groups_;      // not taken yet, pending ones included
  std::set<std::string> pending_;
};

}  // namespace kbv
