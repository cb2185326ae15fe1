#pragma once
// The sandbox's own account of one call's kernels (CUPTI, cuda/kernel_tracer.hpp): which kernels
// ran on a stream other than the one the call was made on and were still running when that
// stream reached the call's end. The judge's window cannot see such work when it waited for
// the call's start: the GPU's time-slicing between the two contexts lets it finish before the
// judge reads the outputs. Said by a process the candidate controls, so the judge takes it only
// as evidence against the candidate (a candidate that silences it gains nothing it did not have).
#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

namespace kbv::sandbox {

class CallTrace {
 public:
  // Starts tracing kernels and copies; nothing happens when CUPTI is unavailable.
  void begin();
  // Queues the marker on `stream` (the call's stream) right after forward() returned: a copy
  // whose start is the moment that stream got to the call's end.
  void mark(void* stream);
  // After the device synchronised: the kernels of other streams that ended after the marker
  // started, as [{"kernel", "stream", "ms_after"}] (at most a few), or null when nothing could
  // be traced (CUPTI unavailable, records dropped, no marker).
  nlohmann::json finish();

 private:
  bool tracing_ = false;
  std::uint32_t marker_stream_ = 0;
  std::uint64_t marked_after_ = 0;  // CUPTI time just before the marker was queued
};

}  // namespace kbv::sandbox
