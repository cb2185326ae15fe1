#include "orchestrate/run_outcomes.hpp"

#include <ostream>

#include <fmt/format.h>

namespace kbv {

bool skipped_for_cuda(const Verdict& v) {
  return v.outcome == Outcome::skipped && v.reason.rfind("candidate needs CUDA", 0) == 0;
}

void RunOutcomes::add(const Verdict& v) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++counts_[v.outcome];
  if (skipped_for_cuda(v)) ++cuda_skips_;
  else if (v.outcome == Outcome::skipped && first_skip_reason_.empty()) first_skip_reason_ = v.reason;
  if (v.outcome == Outcome::internal_error && first_internal_error_.empty())
    first_internal_error_ = v.reason.empty() ? "(no reason given)" : v.reason;
}

std::size_t RunOutcomes::total() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::size_t n = 0;
  for (const auto& [o, c] : counts_) n += c;
  return n;
}

std::size_t RunOutcomes::count(Outcome o) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = counts_.find(o);
  return it == counts_.end() ? 0 : it->second;
}

bool RunOutcomes::all_internal_errors() const {
  const std::size_t n = total();
  return n > 0 && count(Outcome::internal_error) == n;
}

void RunOutcomes::describe(std::ostream& out) const {
  const std::size_t n = total();
  if (n == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  std::string list;
  for (const auto& [o, c] : counts_) list += fmt::format("{}{} {}", list.empty() ? "" : ", ", c, outcome_name(o));
  out << fmt::format("kbv run: outcomes of the {} verdict(s) of this run: {}\n", n, list);
  auto of = [&](Outcome o) {
    auto it = counts_.find(o);
    return it == counts_.end() ? std::size_t{0} : it->second;
  };
  if (cuda_skips_)
    out << fmt::format("kbv run: {} of {} skipped: CUDA candidates need a GPU (this run had none; run it on a machine "
                       "with one, or --device cuda)\n",
                       cuda_skips_, n);
  if (const std::size_t other = of(Outcome::skipped) - cuda_skips_)
    out << fmt::format("kbv run: {} of {} skipped for another reason, the first: {}\n", other, n, first_skip_reason_);
  if (const std::size_t internal = of(Outcome::internal_error))
    out << fmt::format("kbv run: {} of {} internal_error (kbv's fault, not the candidates'; the next run evaluates them "
                       "again); the first: {}\n",
                       internal, n, first_internal_error_);
  const std::size_t judged = n - of(Outcome::skipped) - of(Outcome::internal_error);
  if (judged == 0)
    out << fmt::format("kbv run: WARNING: nothing was judged: none of the {} verdict(s) says anything about a kernel\n", n);
}

}  // namespace kbv
