#include "worker/kernel_audit.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <set>
#include <thread>

#include <ATen/cuda/CUDAContext.h>
#include <pybind11/pybind11.h>

#include "worker/device.hpp"
#ifdef KBV_HAVE_CUPTI
#include "cuda/kernel_tracer.hpp"
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
  synchronize(device);
  auto current = at::cuda::getCurrentCUDAStream(device.index());
  const auto current_id = kbv::cuda::KernelTracer::stream_id_of(current.stream());
  tracer.begin();
  forward();
  // The marker: the first kernel on the current stream after forward() returned. Honest
  // side-stream work is joined into the current stream before it, so it ends before the marker
  // starts; unjoined work (or a thread still launching) ends after.
  at::empty({1}, at::TensorOptions().device(device)).fill_(1.0);
  {
    // Let a candidate's Python thread run (and launch) during the wait.
    pybind11::gil_scoped_release release;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    synchronize(device);
  }
  auto records = tracer.end();
  if (!tracer.available() || tracer.dropped_records() > 0) {
    audit.disturbed = true;
    audit.note = tracer.available() ? std::to_string(tracer.dropped_records()) + " kernel records dropped" : tracer.error();
    return audit;
  }
  // The marker is the last kernel recorded on the current stream.
  const kbv::cuda::KernelRecord* marker = nullptr;
  for (const auto& r : records)
    if (r.stream_id == current_id && (!marker || r.start_ns >= marker->start_ns)) marker = &r;
  if (!marker) {
    audit.disturbed = true;
    audit.note = "the marker kernel was not recorded";
    return audit;
  }
  if (std::getenv("KBV_DEBUG_AUDIT")) {  // the traced timeline, relative to the marker's start
    std::fprintf(stderr, "kbv audit: %zu kernels, current stream %u, marker on stream %u\n", records.size(), current_id,
                 marker->stream_id);
    for (const auto& r : records)
      std::fprintf(stderr, "kbv audit:   stream %u  start %+.1f us  end %+.1f us  %.60s\n", r.stream_id,
                   (static_cast<double>(r.start_ns) - static_cast<double>(marker->start_ns)) / 1e3,
                   (static_cast<double>(r.end_ns) - static_cast<double>(marker->start_ns)) / 1e3, r.name.c_str());
  }
  double total = 0, own = 0;
  for (const auto& r : records) {
    if (&r == marker) continue;
    ++audit.kernels;
    double ns = static_cast<double>(r.end_ns - r.start_ns);
    total += ns;
    bool mine = std::any_of(own_names.begin(), own_names.end(),
                            [&](const std::string& n) { return r.name.find(n) != std::string::npos; });
    if (mine) {
      ++audit.own_kernels;
      own += ns;
    }
    if (marker && r.stream_id != current_id && r.end_ns > marker->start_ns)
      audit.late_kernels.push_back((r.demangled.empty() ? r.name : r.demangled).substr(0, 120) + " on stream " +
                                   std::to_string(r.stream_id));
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
