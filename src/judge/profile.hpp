#pragma once
// Where a judge's time goes inside its stages, for tuning kbv itself (bench/probes/judge_profile.sh):
// with KBV_JUDGE_PROFILE=DIR a judge appends "<protocol>\t<step>\t<seconds>\t<count>" lines for
// every step it timed to DIR/judge-<pid>.profile before it exits. Unset, a step costs one branch.
// Nothing here reaches a verdict: kbv's own stage_seconds are what a verdict reports.
#include <chrono>
#include <string_view>

namespace kbv::judge::profile {

bool enabled();
// The protocol the steps from here on are counted under ("" before the first one).
void set_protocol(std::string_view name);
void add(const char* step, double seconds);
// Appends what was counted to the profile file and starts counting afresh.
void write();

// Counts the time from its construction to its end under `step` (a string literal).
class Step {
 public:
  explicit Step(const char* step) : step_(enabled() ? step : nullptr) {
    if (step_) start_ = std::chrono::steady_clock::now();
  }
  ~Step() {
    if (step_) add(step_, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }
  Step(const Step&) = delete;
  Step& operator=(const Step&) = delete;

 private:
  const char* step_;
  std::chrono::steady_clock::time_point start_;
};

// `f()`, counted under `step`.
template <typename F>
decltype(auto) timed(const char* step, F&& f) {
  Step counted(step);
  return f();
}

}  // namespace kbv::judge::profile
