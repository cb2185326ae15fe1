#include "judge/profile.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>

#include <unistd.h>

namespace kbv::judge::profile {
namespace {

struct Totals {
  std::mutex mutex;
  std::string protocol;
  // (protocol, step) -> seconds, count; ordered so a file reads in a stable order.
  std::map<std::pair<std::string, std::string>, std::pair<double, long>> steps;
};

Totals& totals() {
  static Totals* t = new Totals;  // never destroyed: the judge leaves with _Exit
  return *t;
}

const char* directory() {
  static const char* dir = [] {
    const char* d = std::getenv("KBV_JUDGE_PROFILE");
    return d && *d ? d : nullptr;
  }();
  return dir;
}

// What the main thread's tensors hold, per device type, as torch's allocators report it; and the
// open steps' windows (their start and the most held since), innermost last.
struct MemoryWindow {
  std::int64_t start[2] = {0, 0};
  std::int64_t peak[2] = {0, 0};
};

int slot_of(const c10::Device& device) { return device.is_cpu() ? 0 : 1; }

struct MemoryFollower : c10::MemoryReportingInfoBase {
  std::int64_t live[2] = {0, 0};
  std::vector<MemoryWindow> open;
  // (protocol, step, device slot) -> the most held, the most risen, count
  std::map<std::tuple<std::string, std::string, int>, std::tuple<std::int64_t, std::int64_t, long>> steps;
  void reportMemoryUsage(void*, int64_t bytes, size_t, size_t, c10::Device device) override {
    const int k = slot_of(device);
    live[k] += bytes;
    for (auto& w : open) w.peak[k] = std::max(w.peak[k], live[k]);
  }
  bool memoryProfilingEnabled() const override { return true; }
};

MemoryFollower* follower() {
  static MemoryFollower* f = [] () -> MemoryFollower* {
    const char* m = std::getenv("KBV_JUDGE_MEMORY");
    if (directory() == nullptr || m == nullptr || std::string(m) != "1") return nullptr;
    auto shared = std::make_shared<MemoryFollower>();
    // Pushed once on the thread that first opens a step (the judge's main thread), never popped.
    c10::ThreadLocalDebugInfo::_push(c10::DebugInfoKind::PROFILER_STATE, shared);
    return shared.get();
  }();
  return f;
}

}  // namespace

bool enabled() { return directory() != nullptr; }

void memory_open() {
  MemoryFollower* f = follower();
  if (!f) return;
  MemoryWindow w;
  for (int k = 0; k < 2; ++k) w.start[k] = w.peak[k] = f->live[k];
  f->open.push_back(w);
}

void memory_close(const char* step) {
  MemoryFollower* f = follower();
  if (!f || f->open.empty()) return;
  const MemoryWindow w = f->open.back();
  f->open.pop_back();
  std::lock_guard<std::mutex> lock(totals().mutex);
  for (int k = 0; k < 2; ++k) {
    auto& [peak, rise, count] = f->steps[{totals().protocol, step, k}];
    peak = std::max(peak, w.peak[k]);
    rise = std::max(rise, w.peak[k] - w.start[k]);
    ++count;
  }
}

void set_protocol(std::string_view name) {
  if (!enabled()) return;
  std::lock_guard<std::mutex> lock(totals().mutex);
  totals().protocol = std::string(name);
}

void add(const char* step, double seconds) {
  if (!enabled()) return;
  Totals& t = totals();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto& [sum, count] = t.steps[{t.protocol, step}];
  sum += seconds;
  ++count;
}

void write() {
  if (!enabled()) return;
  Totals& t = totals();
  std::lock_guard<std::mutex> lock(t.mutex);
  const std::string path = std::string(directory()) + "/judge-" + std::to_string(::getpid()) + ".profile";
  if (FILE* f = std::fopen(path.c_str(), "a")) {
    for (const auto& [key, value] : t.steps)
      std::fprintf(f, "%s\t%s\t%.6f\t%ld\n", key.first.empty() ? "-" : key.first.c_str(), key.second.c_str(), value.first,
                   value.second);
    std::fclose(f);
  }
  t.steps.clear();
  MemoryFollower* m = follower();
  if (!m) return;
  const std::string memory_path = std::string(directory()) + "/judge-" + std::to_string(::getpid()) + ".memory";
  if (FILE* f = std::fopen(memory_path.c_str(), "a")) {
    for (const auto& [key, value] : m->steps) {
      const auto& [protocol, step, k] = key;
      const auto& [peak, rise, count] = value;
      std::fprintf(f, "%s\t%s\t%s\t%lld\t%lld\t%ld\n", protocol.empty() ? "-" : protocol.c_str(), step.c_str(), k == 0 ? "cpu" : "cuda",
                   static_cast<long long>(peak), static_cast<long long>(rise), count);
    }
    std::fclose(f);
  }
  m->steps.clear();
}

}  // namespace kbv::judge::profile
