#pragma once
// Where a judge's time goes inside its stages, for tuning kbv itself (bench/probes/judge_profile.sh):
// with KBV_JUDGE_PROFILE=DIR a judge appends "<protocol>\t<step>\t<seconds>\t<count>" lines for
// every step it timed to DIR/judge-<pid>.profile before it exits. Unset, a step costs one branch.
// With KBV_JUDGE_MEMORY=1 as well, the tensor memory its main thread held is followed too (torch's
// allocators report every allocation and free to a thread's profiler state), and
// "<protocol>\t<step>\t<device>\t<peak bytes>\t<rise bytes>\t<count>" lines go to
// DIR/judge-<pid>.memory: the most held during the step, and the most above what was held when it
// began, over its runs (bench/probes/summarize_memory.py).
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

// The memory side (KBV_JUDGE_MEMORY): a step's window opens and closes with it.
void memory_open();
void memory_close(const char* step);

// Counts the time from its construction to its end under `step` (a string literal).
class Step {
 public:
  explicit Step(const char* step) : step_(enabled() ? step : nullptr) {
    if (step_) {
      memory_open();
      start_ = std::chrono::steady_clock::now();
    }
  }
  ~Step() {
    if (step_) {
      add(step_, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
      memory_close(step_);
    }
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
