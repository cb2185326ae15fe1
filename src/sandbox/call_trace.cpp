#include "sandbox/call_trace.hpp"

#include <algorithm>

#include <cuda_runtime_api.h>

#include "cuda/kernel_tracer.hpp"

namespace kbv::sandbox {

namespace {
constexpr std::size_t kMarkerBytes = 4;
constexpr std::size_t kMostReported = 8;
// A joined kernel ends before the marker starts, but an end and a start read by different
// engines may be a little apart: what ends within this much after the marker is not counted (it
// could gain at most this much).
constexpr std::uint64_t kJoinSlackNs = 5000;

// A word on the device and one in pinned host memory, for the process's life. The marker is a
// device-to-host copy: a copy engine starts it as soon as the stream gets there, even while
// another stream's kernels fill every SM (a marker kernel would wait for SMs to free up).
struct MarkerWords {
  void* device = nullptr;
  void* host = nullptr;
};
// A failed allocation or copy of the trace's own leaves no error behind: the runtime's last error
// is per thread, and the candidate's next launch check on this thread (C10_CUDA_KERNEL_LAUNCH_CHECK
// reads cudaGetLastError) would raise it as its own (an honest kernel's runtime_error on a device
// that the candidate's workspace, or other evaluations, had filled).
const MarkerWords* marker_buffer() {
  static MarkerWords words;
  static bool ready = [] {
    const bool ok = cudaMalloc(&words.device, kMarkerBytes) == cudaSuccess &&
                    cudaMallocHost(&words.host, kMarkerBytes) == cudaSuccess;
    if (!ok) cudaGetLastError();
    return ok;
  }();
  return ready ? &words : nullptr;
}

bool is_marker_copy(const cuda::KernelRecord& r) { return r.memcpy && r.bytes == kMarkerBytes && r.name == "memcpy DtoH"; }
}  // namespace

void CallTrace::begin() {
  auto& tracer = cuda::KernelTracer::instance();
  tracing_ = tracer.available() && marker_buffer() != nullptr;
  if (tracing_) tracer.begin(/*with_memcpy=*/true);
  tracing_ = tracing_ && tracer.available() && tracer.copies_traced();
}

void CallTrace::mark(void* stream) {
  if (!tracing_) return;
  marker_stream_ = cuda::KernelTracer::stream_id_of(stream);
  marked_after_ = cuda::KernelTracer::timestamp_now();
  const MarkerWords* words = marker_buffer();
  if (marker_stream_ == cuda::KernelTracer::kUnknownStream) {
    tracing_ = false;
  } else if (cudaMemcpyAsync(words->host, words->device, kMarkerBytes, cudaMemcpyDeviceToHost, static_cast<cudaStream_t>(stream)) !=
             cudaSuccess) {
    cudaGetLastError();  // the trace's error, not the candidate's (marker_buffer)
    tracing_ = false;
  }
}

nlohmann::json CallTrace::finish() {
  if (!tracing_) return nullptr;
  tracing_ = false;
  auto& tracer = cuda::KernelTracer::instance();
  const std::vector<cuda::KernelRecord> records = tracer.end();
  if (!tracer.available() || tracer.dropped_records() > 0) return nullptr;
  // The marker: the last 4-byte device-to-host copy on the call's stream queued after forward()
  // returned (one the candidate queued before it may start after that moment too, and comes
  // before it on the stream). Device-to-host only: the output's copy into IPC-able memory that
  // the sandbox queues after the marker is device-to-device, 4 bytes for a scalar, and taking it
  // for the marker would let work that ended in between go unseen.
  std::uint64_t marker_start = 0;
  for (const auto& r : records)
    if (is_marker_copy(r) && r.stream_id == marker_stream_ && r.start_ns >= marked_after_)
      marker_start = std::max(marker_start, r.start_ns);
  if (marker_start == 0) return nullptr;
  // Kernels and copies alike: a copy on a stream that waited for the call's start and was never
  // joined (the result copied into the output on a side stream) outlives the call as a kernel
  // would, and a copy engine runs beside the judge's context, outside the time-slicing.
  nlohmann::json late = nlohmann::json::array();
  for (const auto& r : records) {
    if (r.stream_id == marker_stream_ || r.end_ns <= marker_start + kJoinSlackNs) continue;
    if (late.size() < kMostReported)
      late.push_back({{"kernel", r.demangled.substr(0, 200)}, {"stream", r.stream_id},
                      {"ms_after", static_cast<double>(r.end_ns - marker_start) / 1e6}});
  }
  return late;
}

}  // namespace kbv::sandbox
