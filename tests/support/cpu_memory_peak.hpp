#pragma once
// The most CPU tensor memory held at once, above where it started, while a CpuMemoryPeak lives:
// c10's CPU allocator reports every allocation and free to a profiler registered on this thread
// (only frees of memory allocated while it listens are reported).
#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>

#include <algorithm>
#include <cstdint>
#include <memory>

namespace kbv::test {

class CpuMemoryPeak {
 public:
  CpuMemoryPeak() : reporter_(std::make_shared<Reporter>()), guard_(c10::DebugInfoKind::PROFILER_STATE, reporter_) {}
  std::int64_t peak_bytes() const { return reporter_->peak; }

 private:
  struct Reporter : c10::MemoryReportingInfoBase {
    std::int64_t live = 0, peak = 0;
    void reportMemoryUsage(void*, int64_t bytes, size_t, size_t, c10::Device device) override {
      if (!device.is_cpu()) return;
      live += bytes;
      peak = std::max(peak, live);
    }
    bool memoryProfilingEnabled() const override { return true; }
  };
  std::shared_ptr<Reporter> reporter_;
  c10::DebugInfoGuard guard_;
};

}  // namespace kbv::test
