#pragma once
// One untimed, traced call of the candidate (CUPTI kernel records) that answers two strict
// checks: no_custom_kernel (did any kernel of the candidate's own source run, and what share of
// GPU time was it?) and unsynchronized_work (did work on other streams or threads finish after
// forward() returned, i.e. after the current stream was done?).
#include <functional>
#include <string>
#include <vector>

#include <ATen/ATen.h>

namespace kbv::worker {

// Whether the current stream was held (StreamGate) from before forward() until the marker was
// queued. Only `held` takes the host's latency out of the late-work test.
enum class GateState { held, timed_out, not_held };

// How long the gate holds the current stream at most: a forward() that synchronises waits this.
inline constexpr int kAuditGateTimeoutMs = 100;

struct KernelAudit {
  bool traced = false;           // CUPTI kernel records were available
  std::string note;              // why not, when !traced
  int kernels = 0;               // kernels the call ran
  int own_kernels = 0;           // ...whose name matches a kernel defined in the candidate's source
  double own_time_share = 0;     // GPU time in those / all kernel time
  std::vector<std::string> late_kernels;  // other-stream kernels still running after forward returned
  GateState gate = GateState::not_held;
  std::string gate_error;        // why CUDA refused the gate, when not_held
  // The tracer lost records or the marker kernel is missing: something else (a profiler the
  // candidate started) took CUPTI's buffers during the call.
  bool disturbed = false;
};

// __global__ functions and @triton.jit functions defined in a candidate's source text.
std::vector<std::string> kernel_names_in_source(const std::string& source);

// Runs `forward` once under the kernel tracer, with the current stream held (StreamGate) until a
// marker copy is queued on it; then opens it and waits a little, so a side stream or thread still
// working is seen finishing after the marker starts.
KernelAudit audit_kernels(const at::Device& device, const std::vector<std::string>& own_names,
                          const std::function<void()>& forward);

}  // namespace kbv::worker
