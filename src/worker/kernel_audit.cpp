#include "worker/kernel_audit.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <set>
#include <thread>

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>
#include <pybind11/pybind11.h>

#include "worker/device.hpp"
#ifdef KBV_HAVE_CUPTI
#include "cuda/kernel_tracer.hpp"
#include "cuda/stream_gate.hpp"
#endif

namespace kbv::worker {

std::vector<std::string> kernel_names_in_source(const std::string& source) {
  std::set<std::string> names;
  static const std::regex cuda_kernel(R"(__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(?:static\s+)?void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\()");
  static const std::regex triton_kernel(R"(@triton\.jit[^\n]*\n(?:\s*@[^\n]*\n)*\s*def\s+(\w+)\s*\()");
  for (const auto* re : {&cuda_kernel, &triton_kernel})
    for (std::sregex_iterator it(source.begin(), source.end(), *re), end; it != end; ++it) names.insert((*it)[1]);
  return {names.begin(), names.end()};
}

KernelAudit audit_kernels(const at::Device& device, const std::vector<std::string>& own_names,
                          const std::function<void()>& forward) {
  KernelAudit audit;
  if (!device.is_cuda()) {
    audit.note = "no kernel tracing on the CPU";
    forward();
    return audit;
  }
#ifdef KBV_HAVE_CUPTI
  auto& tracer = kbv::cuda::KernelTracer::instance();
  if (!tracer.available()) {
    audit.note = "CUPTI kernel tracing unavailable: " + tracer.error();
    forward();
    return audit;
  }
  auto current = at::cuda::getCurrentCUDAStream(device.index());
  const auto current_id = kbv::cuda::KernelTracer::stream_id_of(current.stream());
  // The marker copy's ends: 4 bytes from the device into pinned host memory.
  at::Tensor marker_src = at::zeros({1}, at::TensorOptions().device(device));
  at::Tensor marker_dst = at::empty({1}, at::TensorOptions().pinned_memory(true));
  // The fallback marker's tensor, filled once here, so that queueing the fallback marker neither
  // allocates nor loads a module.
  at::Tensor fallback_marker = at::empty({1}, at::TensorOptions().device(device));
  fallback_marker.fill_(0.0);
  synchronize(device);  // nothing of ours or the candidate's earlier calls is left in the window
  tracer.begin(/*with_memcpy=*/true);
  // The current stream is held until the marker is queued, so side work that waits for it starts
  // with the marker, however long the host takes to get from the launch to the marker
  // (cuda/stream_gate.hpp). A forward() that synchronises waits out the timeout instead.
  // KBV_AUDIT_GATE=0 turns it off, to compare the two on a device (docs/checks.md).
  kbv::cuda::StreamGate gate{std::chrono::milliseconds(kAuditGateTimeoutMs)};
  const char* gate_env = std::getenv("KBV_AUDIT_GATE");
  const bool gate_wanted = !(gate_env && std::string(gate_env) == "0");
  const bool gated = gate_wanted && gate.close(current.stream());
  forward();
  const std::uint64_t returned_ns = kbv::cuda::KernelTracer::timestamp_now();
  // The marker: when the current stream gets past the point where forward() returned. Honest
  // side-stream work is joined into the current stream before it, so it ends first; unjoined
  // work (or a thread still launching) ends after. A copy is the marker because a copy engine
  // starts it as soon as the stream gets there, like the timer's end event; a marker kernel
  // would wait for free SMs, i.e. for the blocks of the very kernel it should catch.
  cudaError_t copied =
      cudaMemcpyAsync(marker_dst.data_ptr(), marker_src.data_ptr(), sizeof(float), cudaMemcpyDeviceToHost, current.stream());
  if (copied != cudaSuccess) cudaGetLastError();  // ours: not to be blamed on the next launch
  // Open at once: until then the marker waits, and side work that does not wait for the
  // current stream runs on.
  const std::uint64_t open_called_ns = kbv::cuda::KernelTracer::timestamp_now();
  gate.open();
  {
    // Fallback marker, for a CUPTI that refuses to trace copies; on the stream that was current
    // before forward(), whatever forward() left current.
    c10::cuda::CUDAStreamGuard on_current(current);
    fallback_marker.fill_(1.0);
  }
  audit.gate = !gated ? GateState::not_held : gate.timed_out() ? GateState::timed_out : GateState::held;
  if (!gated) audit.gate_error = gate_wanted ? gate.error() : "turned off by KBV_AUDIT_GATE=0";
  {
    // Let a candidate's Python thread run (and launch) during the wait.
    pybind11::gil_scoped_release release;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    synchronize(device);
  }
  const bool copies = tracer.copies_traced() && copied == cudaSuccess;
  auto records = tracer.end();
  if (!tracer.available() || tracer.dropped_records() > 0) {
    audit.disturbed = true;
    audit.note = tracer.available() ? std::to_string(tracer.dropped_records()) + " kernel records dropped" : tracer.error();
    return audit;
  }
  // The marker is the last copy (else the last kernel) recorded on the current stream; the
  // fallback kernel after the copy is left out of the counts either way.
  const kbv::cuda::KernelRecord* marker = nullptr;
  const kbv::cuda::KernelRecord* fallback = nullptr;
  for (const auto& r : records) {
    if (r.stream_id != current_id) continue;
    auto& slot = r.memcpy ? marker : fallback;
    if (!slot || r.start_ns >= slot->start_ns) slot = &r;
  }
  if (!marker) {
    if (copies) {
      audit.disturbed = true;
      audit.note = "the marker copy was not recorded";
      return audit;
    }
    marker = fallback;
    audit.note = "CUPTI does not trace copies here: the marker is a kernel (late work may be missed)";
  }
  if (!marker) {
    audit.disturbed = true;
    audit.note = "the marker kernel was not recorded";
    return audit;
  }
  if (std::getenv("KBV_DEBUG_AUDIT")) {  // the traced timeline, relative to the marker's start
    auto rel = [&](std::uint64_t t) { return (static_cast<double>(t) - static_cast<double>(marker->start_ns)) / 1e3; };
    const char* gate_state = audit.gate == GateState::held ? "stream held" : audit.gate == GateState::timed_out ? "gate timed out" : "not held";
    std::fprintf(stderr, "kbv audit: %zu records, current stream %u, marker %s on stream %u; %s, forward returned %+.1f us, open() called %+.1f us\n",
                 records.size(), current_id, marker->name.c_str(), marker->stream_id, gate_state, rel(returned_ns),
                 rel(open_called_ns));
    for (const auto& r : records)
      std::fprintf(stderr, "kbv audit:   stream %u  start %+.1f us  end %+.1f us  %.60s\n", r.stream_id,
                   rel(r.start_ns), rel(r.end_ns), r.name.c_str());
  }
  double total = 0, own = 0;
  for (const auto& r : records) {
    if (&r == marker || &r == fallback) continue;
    bool late = r.stream_id != current_id && r.end_ns > marker->start_ns;
    if (late)
      audit.late_kernels.push_back((r.demangled.empty() ? r.name : r.demangled).substr(0, 120) + " on stream " +
                                   std::to_string(r.stream_id));
    if (r.memcpy) continue;  // the counts and shares are about kernels
    ++audit.kernels;
    double ns = static_cast<double>(r.end_ns - r.start_ns);
    total += ns;
    bool mine = std::any_of(own_names.begin(), own_names.end(),
                            [&](const std::string& n) { return r.name.find(n) != std::string::npos; });
    if (mine) {
      ++audit.own_kernels;
      own += ns;
    }
  }
  audit.traced = true;
  audit.own_time_share = total > 0 ? own / total : 0;
  return audit;
#else
  audit.note = "built without CUPTI";
  forward();
  return audit;
#endif
}

}  // namespace kbv::worker
