#pragma once
// Which kernels ran on the device over a window, with their stream, launch shape and GPU start /
// end times, for the integrity checks: "custom kernels actually launched" (a PyTorch-only rewrite
// shows only aten / cuBLAS kernels) and "no work hidden on other streams" (a record whose stream
// is not the caller's current stream, or that ends after the moment the candidate returned).
//
// How: the CUPTI Activity API with CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, enabled only between
// begin() and end(). The Activity API needs no callback subscriber, so it coexists with
// DeviceMemoryTracker's cuptiSubscribe (CUPTI allows one subscriber per process).
//
// Cost: while a window is open every kernel launch pays CUPTI's bookkeeping (host time per
// launch and a device timestamp write per kernel). Kernels are not serialised (unlike
// CUPTI_ACTIVITY_KIND_KERNEL), but timings taken inside a window are not clean: the worker opens
// windows only in a dedicated, untimed check pass, never while timing. Outside a window the
// activity kind is disabled and launches pay nothing.
//
// Limits the caller must know:
// - end() does not synchronise. Synchronise the device before end(), or records of kernels still
//   running come back incomplete (start_ns == end_ns == 0) or not at all.
// - Process-wide: kernels of every thread, stream and device launched between begin() and end()
//   are listed, the caller's own included.
// - Kernels launched from the device (dynamic parallelism) are not listed; their parent is.
// - Under nsys / ncu / compute-sanitizer CUPTI may refuse the activity kind: available() turns
//   false and error() says why.
// - Anyone else in the process calling cuptiActivityRegisterCallbacks (e.g. a candidate starting
//   torch.profiler) takes the activity buffers away. begin() registers again, but a theft inside
//   a window makes records vanish: launch a kernel of your own inside each window as a canary and
//   treat its absence from end()'s list as tampering.
#include <cstdint>
#include <string>
#include <vector>

namespace kbv::cuda {

namespace detail {
class TracerState;
}  // namespace detail

// One kernel execution, from a CUpti_ActivityKernel10 record, or one memory copy (memcpy true,
// from a CUpti_ActivityMemcpy6 record; only when the window asked for copies). Times are CUPTI
// timestamps in ns, on the same clock as KernelTracer::timestamp_now().
struct KernelRecord {
  bool memcpy = false;           // a copy-engine transfer, not a kernel; name is "memcpy <kind>"
  std::uint64_t bytes = 0;       // copies only
  std::string name;              // as reported by CUPTI: the mangled name for C++ kernels
  std::string demangled;         // abi::__cxa_demangle of name; equal to name when not mangled
  std::uint32_t stream_id = 0;   // CUPTI stream id, unique within a context (see stream_id_of)
  std::uint32_t device_id = 0;   // CUDA device ordinal
  std::uint32_t context_id = 0;  // CUPTI context id
  std::uint64_t start_ns = 0;    // both 0 when CUPTI could not collect the times
  std::uint64_t end_ns = 0;
  std::uint32_t correlation_id = 0;  // same id as the launching runtime / driver call
  std::int64_t grid_x = 0, grid_y = 0, grid_z = 0;
  std::int64_t block_x = 0, block_y = 0, block_z = 0;
};

class KernelTracer {
 public:
  // Stream id returned by stream_id_of() when CUPTI cannot name the stream.
  static constexpr std::uint32_t kUnknownStream = 0xffffffffu;

  // The process-wide tracer; the first call registers the activity buffer callbacks. Thread-safe.
  // Never destroyed (CUPTI may deliver buffers from its own thread until the process ends).
  static KernelTracer& instance();

  KernelTracer(const KernelTracer&) = delete;
  KernelTracer& operator=(const KernelTracer&) = delete;

  // True when a CUDA device is present, libcupti matches the headers kbv was built with, the
  // buffer callbacks are registered and no window failed to start.
  bool available() const;
  // Why available() is false (empty when it is true); says what to do about it.
  std::string error() const;

  // Clears the records and enables kernel activity collection (and memory copies when
  // with_memcpy: a copy runs on a copy engine, so its start marks when its stream got there even
  // while kernels fill every SM). No-op when unavailable; when CUPTI refuses kernels,
  // available() turns false; when it refuses only copies, copies_traced() turns false.
  void begin(bool with_memcpy = false);
  // Whether the last window traced memory copies.
  bool copies_traced() const;
  // Disables collection, flushes CUPTI's buffers and returns the kernels launched since begin(),
  // in delivery order (not necessarily start order). Synchronises nothing: synchronise the
  // device first. Empty when unavailable or no window was begun. If CUPTI fails here,
  // available() turns false and the list may be incomplete: check available() after end().
  std::vector<KernelRecord> end();
  // Records lost in the last window (CUPTI had no buffer space, or the window held its most
  // records, kMostRecords in kernel_tracer.cpp): nonzero means end()'s list was
  // incomplete and must not be trusted for integrity checks.
  std::uint64_t dropped_records() const;

  // Now, on the clock of KernelRecord::start_ns / end_ns (cuptiGetTimestamp); 0 on failure.
  static std::uint64_t timestamp_now();
  // CUPTI stream id of a CUDA stream handle (cudaStream_t / CUstream as void*) in the current
  // context: nullptr and cudaStreamLegacy give the legacy default stream, cudaStreamPerThread the
  // calling thread's per-thread default stream. kUnknownStream when CUPTI cannot tell.
  static std::uint32_t stream_id_of(void* cuda_stream);

 private:
  KernelTracer();
  detail::TracerState* state_;  // owned, intentionally leaked: CUPTI's callbacks reach it
};

}  // namespace kbv::cuda
