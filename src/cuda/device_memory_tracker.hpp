#pragma once
// Peak device memory over a window (e.g. one forward call), counting every allocation made
// through the CUDA driver or runtime API by anyone in the process: PyTorch's caching allocator,
// and raw cudaMalloc / cuMemAlloc / cuMemCreate calls inside a candidate's own extension, which
// torch.cuda.max_memory_allocated() does not see.
//
// How: a CUPTI callback subscriber on the allocation and free entry points of the driver and
// runtime APIs (see device_memory_tracker.cpp for the list). Only those callbacks are enabled,
// not whole API domains, so kernel launches and event records on the timed path pay nothing.
//
// Limits the caller must know:
// - Only allocations made after subscription are known; a free of an unknown pointer is ignored.
//   The worker therefore calls instance() at start-up, before torch or any candidate allocates.
// - CUPTI allows one subscriber per process. Under nsys / ncu / compute-sanitizer, or with the
//   torch profiler active first, subscription fails: available() is false and error() says why.
// - Bytes are the sizes requested from the API (cudaMallocPitch: pitch x height; cuMemCreate: the
//   physical size). Memory the driver keeps for itself (context, stream-ordered pool reserve,
//   module images) is not counted. Managed memory counts in full when allocated.
// - Process-wide, all devices together. One window at a time (begin_window restarts it).
#include <cstdint>
#include <string>

namespace kbv::cuda {

namespace detail {
class TrackerState;
}  // namespace detail

// What one window saw. Byte counts are live device bytes known to the tracker.
struct WindowStats {
  bool valid = false;  // false when the tracker is unavailable or no window was begun: all zeros
  std::int64_t baseline_live_bytes = 0;  // live at begin_window()
  std::int64_t peak_live_bytes = 0;      // highest live between begin_window() and end_window()
  std::int64_t end_live_bytes = 0;       // live at end_window()
  std::int64_t allocations = 0;          // successful allocations counted in the window
  std::int64_t frees = 0;                // frees of known allocations counted in the window

  // Extra memory the window needed on top of what was live before it.
  std::int64_t peak_delta_bytes() const { return peak_live_bytes - baseline_live_bytes; }
  // Memory the window left behind (kept workspaces, cached outputs, leaks).
  std::int64_t end_delta_bytes() const { return end_live_bytes - baseline_live_bytes; }
};

class DeviceMemoryTracker {
 public:
  // The process-wide tracker; the first call subscribes to CUPTI. Thread-safe. Never destroyed
  // (CUDA may still free memory from atexit handlers after static destructors would have run).
  static DeviceMemoryTracker& instance();

  DeviceMemoryTracker(const DeviceMemoryTracker&) = delete;
  DeviceMemoryTracker& operator=(const DeviceMemoryTracker&) = delete;

  // True when the CUPTI subscription and every allocation callback were set up.
  bool available() const;
  // Why available() is false (empty when it is true); says what to do about it.
  std::string error() const;

  // Starts a window: its baseline and peak are the bytes live now. No-op when unavailable.
  void begin_window();
  // Ends the window begun last and returns what it saw (valid == false if unavailable or no
  // window was begun). Allocations still live stay tracked for later windows.
  WindowStats end_window();

  // Device bytes currently live among the allocations the tracker knows.
  std::int64_t live_bytes() const;

 private:
  DeviceMemoryTracker();
  detail::TrackerState* state_;  // owned, intentionally leaked: CUPTI keeps a pointer to it
};

}  // namespace kbv::cuda
