// One call of the candidate, as the judge makes it: inputs written by the judge into memory it
// shares with the sandbox (behind a gate, so work that does not wait for the caller's stream
// finds poison there: call_window.cpp), the call asked for over the channel, the end of the call
// taken from the GPU (the runner's stream writes its `done` word after forward(); the judge's
// stream waits for it), and the outputs read by the judge itself right after that point. Every
// wait has a deadline; a runner that never signals is released from the host, never waited on
// for ever.
#include <thread>

#include <cuda_runtime_api.h>

#include "cuda/stream_gate.hpp"
#include "ipc/message_fields.hpp"
#include "judge/call_window.hpp"
#include "judge/integrity.hpp"
#include "judge/judgement.hpp"
#include "judge/timing_rules.hpp"
#include "torch_host/device.hpp"
#include "torch_host/py_json.hpp"

namespace kbv::judge {

void Judgement::bind_slot(std::uint32_t slot, const ArgList& like) {
  std::vector<at::Tensor> likes;
  nlohmann::json args = nlohmann::json::array();
  for (const auto& a : like) {
    if (a.is_tensor) {
      args.push_back({{"tensor", likes.size()}});
      likes.push_back(a.tensor);
    } else {
      args.push_back({{"value", guarded(Outcome::problem_error, "get_inputs()", [&] { return torch_host::python_to_json(a.value); })}});
    }
  }
  if (slots_.size() <= slot) slots_.resize(slot + 1);
  // The block it replaces stays allocated until the evaluation ends: the sandbox may still map
  // it, and memory it maps must never become another of the judge's allocations.
  if (slots_[slot]) retired_slots_.push_back(std::move(*slots_[slot]));
  slots_[slot] = guarded(Outcome::internal_error, "sharing the inputs", [&] { return torch_host::SharedBlock::allocate(likes, device_); });
  // Poison before the sandbox can map it: a fresh block may hold what the judge freed before.
  if (slot_poisoned_.size() <= slot) slot_poisoned_.resize(slot + 1, false);
  slot_poisoned_[slot] = false;
  guarded(Outcome::internal_error, "poisoning the inputs", [&] {
    poison_slot(slot);
    return 0;
  });
  bound_values_.resize(slots_.size());
  bound_values_[slot] = args;
  std::vector<int> fds;
  if (slots_[slot]->fd() >= 0) fds.push_back(slots_[slot]->fd());
  try {
    sandbox_->request({{"type", "bind"}, {"slot", slot}, {"block", slots_[slot]->descriptor()}, {"args", args}}, fds, "bound", run_deadline_);
  } catch (const RunnerError& e) {
    end_with_runner_error(e, "handing the inputs to the sandbox");
  }
  reader_->set_inputs(slot_inputs(slot));
}

std::vector<at::Tensor> Judgement::slot_inputs(std::uint32_t slot) const {
  std::vector<at::Tensor> out;
  if (slot >= slots_.size() || !slots_[slot]) return out;
  // One entry per argument, in argument order (non-tensor arguments: undefined).
  std::size_t k = 0;
  for (const auto& a : bound_values_[slot]) out.push_back(a.contains("tensor") ? slots_[slot]->tensors()[k++] : at::Tensor());
  return out;
}

void Judgement::bind_if_needed(std::uint32_t slot, const ArgList& values) {
  // A slot is rebound when the arguments' shapes or plain values change (e.g. another size).
  bool fits = slot < slots_.size() && slots_[slot] && bound_values_[slot].size() == values.size();
  std::size_t k = 0;
  for (std::size_t i = 0; fits && i < values.size(); ++i) {
    const auto& bound = bound_values_[slot][i];
    if (values[i].is_tensor) {
      fits = bound.contains("tensor") && k < slots_[slot]->tensors().size() &&
             slots_[slot]->tensors()[k].sizes() == values[i].tensor.sizes() &&
             slots_[slot]->tensors()[k].strides() == values[i].tensor.strides() &&
             slots_[slot]->tensors()[k].scalar_type() == values[i].tensor.scalar_type();
      ++k;
    } else {
      fits = bound.contains("value") && bound["value"] == torch_host::python_to_json(values[i].value);
    }
  }
  if (!fits) bind_slot(slot, values);
}

void Judgement::copy_inputs(std::uint32_t slot, const ArgList& values) {
  std::size_t k = 0;
  for (const auto& v : values)
    if (v.is_tensor) {
      at::Tensor dst = slots_[slot]->tensors()[k++];
      copy_on_the_sms(dst, v.tensor);
    }
  if (slot < slot_poisoned_.size()) slot_poisoned_[slot] = false;
}

void Judgement::write_inputs(std::uint32_t slot, const ArgList& values) {
  bind_if_needed(slot, values);
  copy_inputs(slot, values);
  torch_host::synchronize(device_);
}

void Judgement::wait_for_stream(const std::string& what, RunnerClient* runner, std::uint32_t seq) {
  if (!device_.is_cuda()) return;
  cudaEvent_t done = nullptr;
  cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
  cudaEventRecord(done, static_cast<cudaStream_t>(stream_));
  cudaError_t e;
  while ((e = cudaEventQuery(done)) == cudaErrorNotReady) {
    if (Clock::now() > run_deadline_) {
      runner->release(seq);  // our stream waits on a word the runner never wrote: let it go
      cudaEventSynchronize(done);
      cudaEventDestroy(done);
      throw Ending{Outcome::timeout, what + ": the call did not end within the run time limit"};
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  cudaEventDestroy(done);
  if (e != cudaSuccess) throw Ending{Outcome::internal_error, what + ": the judge's own stream failed: " + cudaGetErrorString(e)};
}

CallOutputs Judgement::call_candidate(std::uint32_t slot, const ArgList& inputs, const std::string& what, CallMode mode) {
  const bool cuda = device_.is_cuda();
  guarded(Outcome::internal_error, what + ": preparing the inputs", [&] {
    ready_slot(slot, inputs);
    return 0;
  });
  // In its window, the call's work is all queued before the judge's stream writes its inputs:
  // work that does not wait for the caller's stream runs before they are there (on poison).
  std::optional<cuda::StreamGate> gate;
  if (cuda && mode == CallMode::in_window && calls_gated_) {
    gate.emplace(kCallGateTimeout);
    if (!gate->close(stream_)) {
      calls_gated_ = false;  // CUDA refused: no gate can be had on this stream
      gate.reset();
    }
  }
  auto open_gate = [&] {
    if (!gate) return;
    gate->open();
    gate.reset();
  };
  std::uint32_t seq = sandbox_->next_seq();
  std::string error, token;
  try {
    guarded(Outcome::internal_error, what + ": writing the inputs", [&] {
      copy_inputs(slot, inputs);
      return 0;
    });
    if (cuda && !sandbox_->done_is_before(seq))
      throw Ending{Outcome::protocol_violation, what + ": the sandbox signalled the end of a call before it was made"};
    if (cuda && !sandbox_->queue_start(stream_, seq, &error)) throw Ending{Outcome::internal_error, what + ": " + error};
    // Without a gate the inputs (and the start) are on the device before the call is asked for:
    // nothing the sandbox queues on receiving it can run ahead of them.
    if (!gate) torch_host::synchronize(device_);
  } catch (...) {
    open_gate();
    throw;
  }
  nlohmann::json called;
  try {
    token = sandbox_->call(seq, slot, /*trace=*/cuda && mode == CallMode::in_window);
    called = sandbox_->receive_answer("called", seq, token, run_deadline_);
  } catch (const RunnerError& e) {
    sandbox_->release(seq);
    open_gate();
    end_with_runner_error(e, what);
  }
  CallOutputs out;
  std::string status;
  try {
    guarded(Outcome::protocol_violation, what, [&] {
      ipc::Fields f(called, "called");
      status = f.str("status", 16);
      if (status == "error") error = f.str("error", 8000);
      else if (status != "ok") throw ipc::ProtocolError("unknown status");
      return 0;
    });
  } catch (...) {
    sandbox_->release(seq);
    open_gate();
    throw;
  }
  if (status == "error") {
    sandbox_->release(seq);
    open_gate();
    try {
      sandbox_->receive_answer("completed", seq, token, run_deadline_);
    } catch (const RunnerError&) {
      // the candidate's own error is the outcome either way
    }
    throw Ending{Outcome::runtime_error, what + ": " + first_line(error)};
  }
  if (cuda && !sandbox_->queue_wait_done(stream_, seq, &error)) {
    sandbox_->release(seq);
    open_gate();
    throw Ending{Outcome::internal_error, what + ": " + error};
  }
  // forward() has returned, so everything it queued is queued: the window may start. Mapping the
  // outputs happens after (opening the sandbox's memory under a held stream can wait on it).
  open_gate();
  try {
    out.views = reader_->view(ipc::Fields(called, "called").array("outputs", 64));
    refuse_oversized_outputs(out.views, what);
  } catch (const ipc::ProtocolError& e) {
    sandbox_->release(seq);
    throw Ending{Outcome::protocol_violation, what + ": " + e.what()};
  } catch (const Ending&) {
    sandbox_->release(seq);
    throw;
  }
  out.aliased_inputs = torch_host::OutputReader::aliased_inputs(called["outputs"]);
  if (mode == CallMode::in_window) out.snapshot = snapshot_outputs(out.views);
  nlohmann::json completed;
  try {
    completed = sandbox_->receive_answer("completed", seq, token, run_deadline_);
  } catch (const RunnerError& e) {
    sandbox_->release(seq);
    end_with_runner_error(e, what);
  }
  std::string device_error;
  std::optional<std::string> unjoined;
  try {
    device_error = ipc::Fields(completed, "completed").str("error", 8000);
    if (mode == CallMode::in_window) unjoined = unjoined_kernels(ipc::Fields(completed, "completed"));
  } catch (const ipc::ProtocolError& e) {
    sandbox_->release(seq);
    throw Ending{Outcome::protocol_violation, what + ": " + e.what()};
  }
  if (!device_error.empty()) {
    sandbox_->release(seq);
    throw Ending{Outcome::runtime_error, what + ": " + first_line(device_error)};
  }
  wait_for_stream(what, sandbox_.get(), seq);
  if (mode == CallMode::settled) out.snapshot = snapshot_outputs(out.views);
  guarded(Outcome::internal_error, what + ": after the call", [&] {
    close_call(slot, inputs, out, mode);
    return 0;
  });
  // The judge's own evidence first; the sandbox's trace can only add to it.
  if (!out.late_writes && unjoined) out.late_writes = *unjoined;
  return out;
}

}  // namespace kbv::judge
