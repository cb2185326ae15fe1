// Memory: peak device memory of one forward, candidate vs baseline, and what each holds between
// calls. The baseline is measured here, in the judge (caching allocator + CUPTI). The candidate's
// peak is measured by the same code inside its sandbox and reported back: its own account, which
// a candidate that has read kbv could understate (docs/architecture.md, "what is not in force");
// its resident bytes are what its allocator holds between calls, by the same account.
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
  result.method += "; candidate: measured in its sandbox and reported";
  result.ratio_allocated = ratio(result.candidate.peak_allocated_bytes, result.baseline.peak_allocated_bytes);
  result.ratio_device = ratio(result.candidate.peak_device_bytes, result.baseline.peak_device_bytes);
  result.ratio_footprint = ratio(result.candidate.footprint_bytes(), result.baseline.footprint_bytes());
  verdict_.memory = result;
}

void Judgement::record_process_memory(std::int64_t bytes) {
  if (!verdict_.memory) return;
  MemoryResult& m = *verdict_.memory;
  m.candidate.process_bytes = bytes;
  m.ratio_footprint = ratio(m.candidate.footprint_bytes(), m.baseline.footprint_bytes());
}

}  // namespace kbv::judge
