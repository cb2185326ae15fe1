// Memory: peak device memory of one forward, candidate vs baseline, and what each holds between
// calls. The baseline is measured here, in the judge (caching allocator + CUPTI). The candidate's
// figure is the judge's own: the device memory the driver accounts to its sandbox's processes
// (NVML, judge_evidence.cpp), read right after its measured forward and again at random timed
// rounds; the footprint the reports compare is never below it. The sandbox's account of its peak
// and resident bytes (measured by the same code as the baseline's, inside the sandbox, and
// reported over a channel the candidate can relay and rewrite) is kept beside it as a
// cross-check: an account far below what the driver shows is the flag sandbox_account_differs.
#include "ipc/message_fields.hpp"
#include "judge/distributions.hpp"
#include "judge/held_memory.hpp"
#include "judge/judgement.hpp"
#include "torch_host/device.hpp"
#include "torch_host/memory.hpp"

namespace kbv::judge {
namespace {

double ratio(std::int64_t a, std::int64_t b) { return b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 0.0; }

}  // namespace

void Judgement::measure_memory() {
  enter(Stage::memory);
  MemoryResult result;
  result.method = memory_method_;
  ArgList inputs = guarded(Outcome::problem_error, "memory: get_inputs()", [&] { return draw_inputs(source_, job_.secret ^ 0x6d656dULL); });
  result.baseline = guarded(Outcome::problem_error, "memory: Model.forward", [&] {
    torch_host::restore_backend_state(*backend_state_);
    torch_host::set_tf32(protocol_tf32());
    return torch_host::measure_forward_memory(device_, [&] { auto out = torch_host::call_forward(reference_, inputs); });
  });
  result.baseline.resident_bytes = held_tensor_bytes({reference_, problem_}, device_).bytes;
  reference_resident_ = std::max(reference_resident_, result.baseline.resident_bytes);
  guarded(Outcome::internal_error, "memory: writing the inputs", [&] {
    write_inputs(0, inputs);
    torch_host::synchronize(device_);
    return 0;
  });
  nlohmann::json reply;
  try {
    reply = sandbox_->request({{"type", "memory"}, {"slot", 0}}, {}, "memory", run_deadline_);
  } catch (const RunnerError& e) {
    end_with_runner_error(e, "memory: ModelNew.forward");
  }
  guarded(Outcome::protocol_violation, "the sandbox's memory report", [&] {
    ipc::Fields f(reply, "memory");
    if (f.str("status", 16) != "ok") throw Ending{Outcome::runtime_error, "memory: ModelNew.forward: " + first_line(f.str("error", 8000))};
    result.candidate.peak_allocated_bytes = f.integer("peak_allocated", 0, std::int64_t{1} << 50);
    result.candidate.peak_device_bytes = f.integer("peak_device", 0, std::int64_t{1} << 50);
    result.candidate.resident_bytes = f.integer("resident", 0, std::int64_t{1} << 50);
    return 0;
  });
  // The judge's own reading, with the forward's memory still in the sandbox's allocator.
  const auto overhead = MemoryUse::kProcessOverheadBytes;
  if (auto held = device_holders()) {
    result.candidate.process_bytes = held->sandbox;
    result.method += "; candidate: its processes' device memory from the driver (NVML), its sandbox's own account beside it";
    const std::int64_t account = result.candidate.resident_bytes + result.candidate.peak_device_bytes;
    // Beyond what an honest process holds past its own account (libraries' workspaces, kernel
    // code: kProcessOverheadBytes) and a quarter for the allocator's rounding.
    if (held->sandbox - overhead > account + account / 4 + overhead)
      flag(FlagName::sandbox_account_differs,
           "memory: the sandbox reported a peak of " + std::to_string(result.candidate.peak_device_bytes) + " bytes and " +
               std::to_string(result.candidate.resident_bytes) + " held, the driver showed its processes holding " +
               std::to_string(held->sandbox) + " bytes");
  } else {
    result.method += "; candidate: its sandbox's own account (the driver gave no per-process figure)";
    warn("memory: the candidate's figure is its sandbox's own account: the driver gave no per-process figure (NVML)");
  }
  result.ratio_allocated = ratio(result.candidate.peak_allocated_bytes, result.baseline.peak_allocated_bytes);
  result.ratio_device = ratio(result.candidate.peak_device_bytes, result.baseline.peak_device_bytes);
  result.ratio_footprint = ratio(result.candidate.footprint_bytes(), result.baseline.footprint_bytes());
  verdict_.memory = result;
}

void Judgement::record_process_memory(std::int64_t bytes) {
  if (!verdict_.memory) return;
  MemoryResult& m = *verdict_.memory;
  // The most the judge saw, here or in the memory phase's own reading.
  m.candidate.process_bytes = std::max(m.candidate.process_bytes.value_or(0), bytes);
  m.ratio_footprint = ratio(m.candidate.footprint_bytes(), m.baseline.footprint_bytes());
}

}  // namespace kbv::judge
