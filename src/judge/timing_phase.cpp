// Timing across the process boundary (docs/timing.md, docs/architecture.md).
//
// The candidate runs in another process, so another CUDA context, and the GPU time-slices
// between contexts: on the H200 a call that crosses into another process's context and back
// costs ~280 us more than the same work in one stream (bench/RESULTS.md, 2026-12-01). So every
// callable is timed through the same hop, by the judge's own events:
//   candidate:  judge stream [gate] inputs -> flush -> E0 -> start word | sandbox: forward | done word -> E1
//   baseline:   judge stream [gate] inputs -> flush -> E0 -> start word | twin: one tiny kernel | done word
//                                                                      -> Model.forward -> E1
//   hop:        judge stream [gate] flush -> E0 -> start word | twin | done word -> E1
// and the median of the hop samples is subtracted from every sample. The gate holds the judge's
// stream until every callable's work is queued, so host dispatch (and the channel's latency) is
// outside the samples, on both sides alike. The judge's E1 cannot run while the sandbox's context
// holds the GPU, so work a candidate leaves running on a side stream lands inside its sample, or,
// past one time slice, after the judge's snapshot of its outputs.
//
// Every round draws fresh inputs (nothing a cache could remember); in every round the judge reads
// the candidate's outputs right after E1 and compares them with the reference of the same
// inputs, which is the TF32-off baseline's own output of that round. Between calls the shared
// inputs and the call's outputs hold poison (call_window.hpp): work that ran before the round's
// inputs arrived, or an output handed back unwritten, is wrong, and the verdict says which.
//
// The candidate cannot slow what it is compared with: the sandbox is frozen (isolation/freeze)
// during every baseline and hop sample, so none of its processes runs then, and, on the GPU, the
// hop is timed again once the sandbox has ended; rounds whose hop is well above that idle hop
// mean work of the sandbox's context was still on the device while the judge timed the others
// (device_busy). The judge also reads the sandbox's whole device memory from the driver (NVML,
// per process) at random rounds, between calls and with a call queued.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <random>
#include <set>

#include <signal.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "core/timing_note.hpp"
#include "cuda/process_memory.hpp"
#include "cuda/stream_gate.hpp"
#include "isolation/freeze.hpp"
#include "ipc/message_fields.hpp"
#include "judge/distributions.hpp"
#include "judge/host_contention.hpp"
#include "judge/integrity.hpp"
#include "judge/judgement.hpp"
#include "judge/l2_flush.hpp"
#include "judge/profile.hpp"
#include "judge/timing_rules.hpp"
#include "judge/untimed_draws.hpp"
#include "stats/compare.hpp"
#include "stats/median_ci.hpp"
#include "stats/stopping_rule.hpp"
#include "stats/summary.hpp"
#include "torch_host/backend_state.hpp"
#include "torch_host/device.hpp"
#include "torch_host/memory.hpp"

namespace kbv::judge {
namespace {

constexpr int kHiddenOneIn = 4;
// The sandbox's device memory is read from the driver in one round in kMemoryOneIn, at most
// kMemorySamples times (an NVML query takes about a millisecond).
constexpr int kMemoryOneIn = 8;
constexpr int kMemorySamples = 24;
// A sandbox that could not be frozen in this many rounds is a protocol violation: its processes
// keep running while the baselines are timed (a thread held in uninterruptible sleep does that).
constexpr int kMaxUnfrozenRounds = 10;

using SteadyClock = std::chrono::steady_clock;

enum class Kind { candidate, baseline, hop };

struct Callable {
  Kind kind;
  std::string name;  // "candidate", "eager_tf32_off", "eager_tf32_on", "torch_compile", "hop"
  bool tf32 = false;
  pybind11::object model;  // baselines: what the judge calls (Model, or torch.compile(Model))
};

// One timed call's result.
struct Sample {
  double ms = 0;
  std::vector<at::Tensor> outputs;  // candidate: the judge's snapshot; baseline: its outputs
  bool gate_timed_out = false;
  std::optional<std::string> late_writes, input_mutation;  // candidate: found once its call was over
  // CPU baselines: how long the judge's threads waited for a core during the sample (ms), when
  // the kernel counts it (host_contention.hpp).
  std::optional<double> wait_ms;
};

// The same executable as this judge's: another kbv-judge. Unreadable (another user's process):
// not known to be one.
bool is_kbv_judge(pid_t pid) {
  std::error_code ec;
  static const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const auto exe = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec);
  return !ec && !self.empty() && exe == self;
}

}  // namespace

void Judgement::drop_idle_judges(const cuda::ProcessMemory& nvml, std::uint64_t since, std::set<pid_t> working,
                                 std::set<pid_t>& others) const {
  auto now = nvml.working_since(since);
  if (!now) return;  // no per-process samples: every other process counts, as before
  working.insert(now->begin(), now->end());
  // The samples must show this evaluation's own work (its calls and baselines ran throughout the
  // rounds): else they do not cover the rounds, or name processes by other pids (a container's
  // pid namespace), and nothing is dropped.
  std::set<pid_t> ours{::getpid()};
  for (const RunnerClient* r : {sandbox_.get(), twin_.get()})
    if (r)
      for (pid_t p : isolation::sandbox_processes(r->launched())) ours.insert(p);
  if (std::none_of(ours.begin(), ours.end(), [&](pid_t p) { return working.count(p) > 0; })) return;
  // Only kbv's own judges, positively idle: any other process (a light inference server whose
  // kernels read 0% in a sample) stays a tenant.
  for (auto it = others.begin(); it != others.end();)
    it = (!working.count(*it) && is_kbv_judge(*it)) ? others.erase(it) : std::next(it);
}

void Judgement::measure_time() {
  enter(Stage::timing);
  const std::size_t warnings_before = verdict_.warnings.size();
  std::optional<profile::Step> setup_step(std::in_place, "timing.setup");
  const bool cuda = device_.is_cuda();
  const TimingOptions& options = job_.timing;
  std::mt19937_64 rng(job_.secret ^ 0x6b627674696d65ULL ^ static_cast<std::uint64_t>(Clock::now().time_since_epoch().count()));

  std::vector<Callable> callables{{Kind::candidate, "candidate", protocol_tf32(), {}}};
  if (cuda) {
    callables.push_back({Kind::baseline, std::string(baseline_name(BaselineKind::eager_tf32_off)), false, reference_});
    callables.push_back({Kind::baseline, std::string(baseline_name(BaselineKind::eager_tf32_on)), true, reference_});
  } else {
    // no TF32 on a CPU
    callables.push_back({Kind::baseline, std::string(baseline_name(protocol_->baseline)), false, reference_});
  }
  const std::string primary(baseline_name(protocol_->baseline));
  const std::size_t reference_index = 1;  // the TF32-off (or only) baseline's outputs are the reference

  TimingResult result;
  result.clock = cuda ? "cuda_events" : "cpu_steady_clock";
  result.primary_baseline = primary;
  result.target_rel_ci = options.target_rel_ci;
  L2Flush flush(device_, verdict_.device.l2_bytes);
  result.l2_flush = flush.bytes() > 0;
  result.l2_flush_bytes = flush.bytes();

  // The baselines' own inputs: judge-private buffers the candidate never sees.
  ArgList base_inputs = guarded(Outcome::problem_error, "timing: get_inputs()", [&] {
    return torch_host::clone_args(draw_inputs(source_, rng()));
  });
  if (job_.timing.torch_compile) {
    result.torch_compile_seconds = compile_reference(base_inputs);
    if (compiled_)
      callables.push_back({Kind::baseline, std::string(baseline_name(BaselineKind::torch_compile)), protocol_tf32(), *compiled_});
  }
  callables.push_back({Kind::hop, "hop", false, {}});
  // Bind the candidate's input slot to get_inputs()'s layout now (every timed draw has it): a
  // rebind inside a gated sample would allocate on a device whose stream the gate holds (the
  // correctness phase may have ended on a hidden list of another shape).
  guarded(Outcome::internal_error, "timing: binding the inputs", [&] {
    write_inputs(kTimingSlot, base_inputs);
    return 0;
  });
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  if (cuda) {
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
  }
  bool gated = cuda;
  const Tolerance tol = tolerance();
  // Timed rounds draw from the protocol's own distributions (mixed signs, outliers, zeros under
  // strict), each round one at random with a fresh private seed: a kernel right only on
  // get_inputs()'s values (an identity for ReLU on [0, 1)) is met by the checked calls too.
  const std::vector<DistributionSpec> kinds = timed_distributions();
  // A hidden-test file's lists shaped like get_inputs() come in one round in kHiddenOneIn. Such a
  // round is always checked and never counted: its samples stay out of every figure (a file's
  // lists may not change with the seed, so a candidate could cache their outputs), and being
  // right only when checked gains nothing on inputs that are always checked.
  const std::vector<DistributionSpec> hidden_kinds = timed_hidden_distributions();
  bool drew_hidden = false;
  auto draw_round = [&] {
    drew_hidden = false;
    if (!hidden_kinds.empty() && rng() % kHiddenOneIn == 0) {
      DistributionSpec spec = hidden_kinds[rng() % hidden_kinds.size()];
      spec.seed = rng();
      ArgList drawn = inputs_of(spec);
      // A file may change its lists' layout with the seed: only same-layout draws go in a slot.
      if (same_layout(drawn, base_inputs)) {
        drew_hidden = true;
        return drawn;
      }
    }
    DistributionSpec spec = kinds[rng() % kinds.size()];
    spec.seed = rng();
    return inputs_of(spec);
  };

  // The driver's per-process view of the device (NVML): the device memory of the sandbox's
  // processes above the twin's (a bare torch process), the most seen; and any process on the
  // device that is none of the judge's, the sandbox's or the twin's (the device was shared, so a
  // busy device is not the candidate's doing).
  std::unique_ptr<cuda::ProcessMemory> nvml;
  std::string nvml_error;
  if (cuda) nvml = cuda::ProcessMemory::open(device_.index(), &nvml_error);
  if (cuda && !nvml && verdict_.memory) warn("memory: the sandbox's device memory was not read from the driver: " + nvml_error);
  const std::uint64_t rounds_began_us = cuda::ProcessMemory::now_us();
  std::set<pid_t> working_seen;  // pids NVML's utilization samples showed working since then
  std::optional<std::int64_t> process_bytes;
  std::set<pid_t> other_processes;
  int memory_samples = 0;
  // `frozen_now`: the sandbox is frozen, so its processes can neither start nor end meanwhile and
  // every running pid NVML lists that is not among them is truly someone else's (holders_in).
  auto read_process_memory = [&](bool frozen_now) {
    if (!nvml || memory_samples >= kMemorySamples) return;
    ++memory_samples;
    auto used = nvml->used();
    if (!used) return;
    std::set<pid_t> others;
    const DeviceHolders h = holders_in(*used, frozen_now ? &others : nullptr);
    if (verdict_.memory) process_bytes = std::max(process_bytes.value_or(0), h.sandbox);
    // Such a tenant turns device_busy and implausible_speed into warnings (timing_finish.cpp).
    other_processes.insert(others.begin(), others.end());
    // Who worked on the device so far, read while the rounds go on too (the driver's sample
    // buffer is short, and a process that has ended is no longer listed).
    if (auto working = nvml->working_since(rounds_began_us)) working_seen.insert(working->begin(), working->end());
  };
  bool memory_round = false;

  auto sample = [&](const Callable& c, const ArgList& fresh) -> Sample {
    Sample s;
    profile::Step step(c.kind == Kind::candidate ? "timing.sample.candidate" : c.kind == Kind::baseline ? "timing.sample.baseline" : "timing.sample.hop");
    RunnerClient& runner = c.kind == Kind::candidate ? *sandbox_ : *twin_;
    const std::string what = "timing: " + c.name;
    if (cuda) reset_persisting_l2(device_);  // no sample inherits L2 state another context set
    // The shared inputs hold poison, finished on the device, before the gate closes and the call
    // is asked for: the round's inputs arrive only behind the gate (call_window.cpp).
    if (c.kind == Kind::candidate)
      guarded(Outcome::internal_error, what + ": poisoning the inputs", [&] {
        ready_slot(kTimingSlot, fresh);
        return 0;
      });
    std::optional<cuda::StreamGate> gate;
    if (gated) {
      gate.emplace(std::chrono::duration_cast<std::chrono::milliseconds>(kGateTimeout));
      if (!gate->close(stream_)) {
        gated = false;
        warn("timing without the gate: " + gate->error());
        gate.reset();
      }
    }
    guarded(Outcome::runtime_error, what + ": preparing the inputs", [&] {
      profile::Step prepare("timing.sample.prepare");
      if (c.kind == Kind::candidate) copy_inputs(kTimingSlot, fresh);
      if (c.kind == Kind::baseline)
        for (std::size_t i = 0; i < fresh.size(); ++i)
          if (fresh[i].is_tensor) base_inputs[i].tensor.copy_(fresh[i].tensor);
      flush.flush();
      return 0;
    });
    std::uint32_t seq = runner.next_seq();
    std::string error, token;
    if (cuda && !runner.done_is_before(seq)) {
      if (gate) gate->open();
      throw Ending{Outcome::protocol_violation, what + ": the sandbox signalled the end of a call before it was made"};
    }
    const bool count_wait = !cuda && c.kind == Kind::baseline;
    const std::optional<ThreadWaits> wait0 = count_wait ? thread_waits() : std::nullopt;
    auto t0 = SteadyClock::now();
    if (cuda) {
      cudaEventRecord(e0, static_cast<cudaStream_t>(stream_));
      if (!runner.queue_start(stream_, seq, &error)) throw Ending{Outcome::internal_error, what + ": " + error};
      // Ungated, the window's start is on the device before the call is asked for (every
      // callable alike): nothing the runner queues on receiving it can run ahead of E0.
      if (!gate) cudaEventSynchronize(e0);
    }
    nlohmann::json called;
    try {
      token = runner.call(seq, kTimingSlot);
      called = runner.receive_answer("called", seq, token, run_deadline_);
    } catch (const RunnerError& e) {
      runner.release(seq);
      if (gate) gate->open();
      end_with_runner_error(e, what);
    }
    std::string status, call_error;
    try {
      ipc::Fields f(called, "called");
      status = f.str("status", 16);
      if (status == "error") call_error = f.str("error", 8000);
      if (status == "ok" && c.kind == Kind::candidate) f.array("outputs", 64);
    } catch (const ipc::ProtocolError&) {
      status.clear();
    }
    if (status != "ok" && status != "error") {
      runner.release(seq);
      if (gate) gate->open();
      throw Ending{Outcome::protocol_violation, what + ": a malformed answer to call " + std::to_string(seq)};
    }
    // Only the candidate's own call can fail by the candidate's doing; the twin's is kbv's.
    const Outcome call_failed = c.kind == Kind::candidate ? Outcome::runtime_error : Outcome::internal_error;
    if (status == "error") {
      runner.release(seq);
      if (gate) gate->open();
      throw Ending{call_failed, what + ": " + first_line(call_error)};
    }
    if (cuda && !runner.queue_wait_done(stream_, seq, &error)) {
      runner.release(seq);
      throw Ending{Outcome::internal_error, what + ": " + error};
    }
    // Its forward() has returned and its work waits behind the gate: what it allocated for the
    // call is still held.
    if (c.kind == Kind::candidate && memory_round && gate) read_process_memory(false);
    if (c.kind == Kind::baseline) {
      // torch.compile(Model) ran once already: failing now is kbv's (or inductor's) fault, not the problem's.
      const Outcome failed = c.model.is(reference_) ? Outcome::problem_error : Outcome::internal_error;
      s.outputs = guarded(failed, what + ": Model.forward", [&] {
        torch_host::restore_backend_state(*backend_state_);
        torch_host::set_tf32(c.tf32);
        auto out = torch_host::call_forward(c.model, base_inputs);
        // On the CPU the sandbox copies its outputs out inside its call: the baseline pays the same.
        if (!cuda)
          for (auto& o : out) o = o.clone();
        note_reference_outputs(out);
        return out;
      });
    }
    if (cuda) cudaEventRecord(e1, static_cast<cudaStream_t>(stream_));
    auto t1 = SteadyClock::now();
    if (wait0)
      if (auto wait1 = thread_waits()) s.wait_ms = static_cast<double>(waited_between(*wait0, *wait1)) / 1e6;
    // Everything the sample times is queued: the gate may open. The outputs are mapped after it
    // (opening the sandbox's memory under a held stream can wait on it) and read after E1.
    if (gate) {
      gate->open();
      s.gate_timed_out = gate->timed_out();
    }
    CallOutputs call;
    if (c.kind == Kind::candidate) {
      try {
        const auto& outputs = ipc::Fields(called, "called").array("outputs", 64);
        call.aliased_inputs = torch_host::OutputReader::aliased_inputs(outputs);
        for (int input : call.aliased_inputs)
          if (input >= 0 && strict()) flag(FlagName::output_aliases_input, "a timed call returned a view of input " + std::to_string(input));
        call.views = reader_->view(outputs);
        refuse_oversized_outputs(call.views, what);
        // Bounded by the reference's outputs: running short here is the judge's (oom_blame).
        call.snapshot = snapshot_outputs(call.views);
      } catch (const ipc::ProtocolError& e) {
        runner.release(seq);
        throw Ending{Outcome::protocol_violation, what + ": " + e.what()};
      } catch (...) {
        runner.release(seq);
        throw;
      }
    }
    nlohmann::json completed;
    try {
      completed = runner.receive_answer("completed", seq, token, run_deadline_);
    } catch (const RunnerError& e) {
      runner.release(seq);
      end_with_runner_error(e, what);
    }
    std::string device_error;
    try {
      device_error = ipc::Fields(completed, "completed").str("error", 8000);
    } catch (const ipc::ProtocolError& e) {
      runner.release(seq);
      throw Ending{Outcome::protocol_violation, what + ": " + e.what()};
    }
    if (!device_error.empty()) {
      runner.release(seq);
      throw Ending{call_failed, what + ": " + first_line(device_error)};
    }
    profile::timed("timing.sample.wait_stream", [&] { wait_for_stream(what, &runner, seq); });
    if (c.kind == Kind::candidate) {
      profile::Step close("timing.sample.close_call");
      guarded(Outcome::internal_error, what + ": after the call", [&] {
        close_call(kTimingSlot, fresh, call, CallMode::in_window);
        return 0;
      });
      s.outputs = std::move(call.snapshot);
      s.late_writes = std::move(call.late_writes);
      s.input_mutation = std::move(call.input_mutation);
    }
    if (cuda) {
      float ms = 0;
      cudaEventElapsedTime(&ms, e0, e1);
      s.ms = ms;
    } else {
      s.ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    }
    return s;
  };

  stats::StoppingRule rule;
  rule.min_rounds = options.min_rounds;
  rule.min_seconds = options.min_seconds;
  rule.budget_seconds = options.budget_seconds;
  rule.target_rel_half_width = options.target_rel_ci;

  const std::size_t n = callables.size();
  const std::size_t hop_index = n - 1;
  std::vector<std::vector<double>> raw(n);
  std::vector<std::size_t> others;  // every callable but the candidate (index 0)
  for (std::size_t i = 1; i < n; ++i) others.push_back(i);

  // Frozen while anything but the candidate is timed. Thawed before the candidate's sample (and
  // on any exit: the freeze ends with its object).
  const bool freezable = isolation::can_freeze(sandbox_->launched());
  if (!freezable)
    warn("timing: the sandbox could not be frozen (no cgroup, no PID namespace of its own): its processes could run "
         "while the baselines were timed");
  std::optional<isolation::SandboxFreeze> freeze;
  std::string freeze_error;
  auto set_frozen = [&](bool want) {
    if (!freezable) return true;
    profile::Step step(want ? "timing.freeze" : "timing.thaw");
    if (!want) {
      freeze.reset();
      return true;
    }
    if (!freeze) freeze.emplace(sandbox_->launched());
    if (!freeze->frozen()) freeze_error = freeze->error();
    return freeze->frozen();
  };
  int unfrozen_rounds = 0;
  int checked = 0, warm_rounds = 0;
  // CPU: the judge's threads' run-queue wait in the counted baseline samples, and those samples'
  // time (host_contention.hpp).
  double baseline_wait_ms = 0, baseline_waited_in_ms = 0;
  bool wait_unread = false;
  WarmupStability warm_stability;
  auto warm_start = SteadyClock::now();
  SteadyClock::time_point start;
  stats::StopDecision decision = stats::StopDecision::keep_going;
  int round = 0;
  bool warming = true;
  // The correctness phase's draws and copies, freed, go back to the device before the rounds.
  torch_host::free_cached_memory_over(device_, kFreeCacheOverBytes);
  setup_step.reset();
  while (decision == stats::StopDecision::keep_going) {
    ArgList fresh = profile::timed("timing.draw", [&] { return guarded(Outcome::problem_error, "timing: get_inputs()", [&] { return draw_round(); }); });
    // The candidate first or last, the others in a random order between freezing and thawing.
    std::shuffle(others.begin(), others.end(), rng);
    std::vector<std::size_t> order = others;
    if (rng() % 2 == 0) order.insert(order.begin(), 0);
    else order.push_back(0);
    memory_round = round == 0 && warm_rounds == 0 ? true : rng() % kMemoryOneIn == 0;
    std::vector<Sample> round_samples(n);
    bool fell_back = false, frozen = true;
    for (std::size_t k = 0; k < order.size(); ++k) {
      const std::size_t i = order[k];
      if (i == 0) {
        set_frozen(false);
      } else if (k == 0 || order[k - 1] == 0) {
        frozen = set_frozen(true) && frozen;
        if (memory_round && frozen && freezable) read_process_memory(true);  // between calls, nothing of it running
      }
      round_samples[i] = sample(callables[i], fresh);
      fell_back = fell_back || round_samples[i].gate_timed_out;
      // Only the reference (and, under TF32, its TF32 twin) is compared with: the other
      // baselines' outputs are let go at once, not held beside it through the round.
      const bool compared = i == reference_index || (i == 2 && cuda && protocol_tf32());
      if (callables[i].kind == Kind::baseline && !compared) round_samples[i].outputs.clear();
    }
    // Every call is checked, warm-up and hidden rounds included: there is no checked call to tell
    // apart from the others, and no luck of a draw in whether a wrong output is met.
    {
      profile::Step step("timing.check");
      const Sample& cand = round_samples[0];
      const std::string call_name = "timed call " + std::to_string(warm_rounds + round + 1);
      if (cand.late_writes) {
        set_frozen(false);
        end_unsynchronized(call_name + ": " + *cand.late_writes);
      }
      if (strict() && cand.input_mutation) flag(FlagName::input_mutated, call_name + ": " + *cand.input_mutation);
      const auto& ref = round_samples[reference_index].outputs;
      // As in the correctness phase, a reference with NaN/Inf is nothing to compare with, unless
      // the protocol asks the NaN pattern to match.
      if (protocol_->nan_pattern_must_match || all_finite(ref)) {
        ++checked;
        std::vector<at::Tensor> ref_tf32;
        if (cuda && protocol_tf32()) ref_tf32 = round_samples[2].outputs;
        auto cmp = judge_outputs(fresh, ref, ref_tf32, cand.outputs, tol);
        if (!cmp.ok) {
          set_frozen(false);  // the sandbox answers the explaining call
          ArgList decoy = guarded(Outcome::problem_error, "timing: get_inputs()", [&] { return draw_round(); });
          if (auto why = explain_wrong_output(kTimingSlot, fresh, decoy, ref, ref_tf32, cand.outputs, tol))
            end_unsynchronized(call_name + " (fresh inputs): " + *why + " (in its window: " + cmp.reason + ")");
          if (strict()) flag(FlagName::result_reuse, call_name + " (fresh inputs): " + cmp.reason);
          throw Ending{Outcome::incorrect, "a timed call's output is not the reference of its own inputs (" + call_name + "): " + cmp.reason};
        }
      }
    }
    if (!frozen && ++unfrozen_rounds >= kMaxUnfrozenRounds)
      throw Ending{Outcome::protocol_violation, "timing: the sandbox could not be frozen in " + std::to_string(unfrozen_rounds) +
                                                    " rounds (" + freeze_error + "): its processes kept running while the baselines were timed"};
    if (fell_back && gated) {
      // forward() waited for the GPU while the gate held it (or queued more launches than fit):
      // time everything ungated from here, with the host's time inside the samples.
      gated = false;
      warn("timed without the gate: a forward() synchronised the device or queued more launches than the queue holds "
           "(the gate opened itself after " + std::to_string(kGateTimeout.count()) + " ms); host dispatch is inside both sides' samples");
      for (auto& r : raw) r.clear();
      warming = true;
      warm_start = SteadyClock::now();
      warm_stability.reset();
      continue;
    }
    if (warming) {
      ++warm_rounds;
      double warm = std::chrono::duration<double>(SteadyClock::now() - warm_start).count();
      std::vector<double> warm_samples;
      for (const auto& rs : round_samples) warm_samples.push_back(rs.ms);
      const bool stable = warm_stability.add(warm_samples);
      if (warm_rounds >= 3 && (warm >= options.warmup_seconds || stable || warm_rounds >= 1000)) {
        warming = false;
        start = SteadyClock::now();
        profile::add("timing.warmup", warm);
      }
      continue;
    }
    // A round whose baselines were timed with the sandbox running is not counted.
    const bool counted = !drew_hidden && frozen;
    if (counted)
      for (std::size_t i = 0; i < n; ++i) {
        raw[i].push_back(round_samples[i].ms);
        if (callables[i].kind != Kind::baseline || cuda) continue;
        if (round_samples[i].wait_ms) {
          baseline_wait_ms += *round_samples[i].wait_ms;
          baseline_waited_in_ms += round_samples[i].ms;
        } else {
          wait_unread = true;  // no share from part of the samples: the contention is unknown
        }
      }
    if (!counted) {
      // Rounds that are not counted still spend the budget.
      if (!warming && std::chrono::duration<double>(SteadyClock::now() - start).count() >= options.budget_seconds)
        decision = stats::StopDecision::budget;
      continue;
    }
    ++round;
    // The ratio the verdict will report, as it stands after this round (the same hop rule).
    const double hop = median_of(raw[hop_index]);
    const bool below = below_hop(raw[0], hop, cuda);
    std::vector<double> deciding;
    std::size_t primary_index = 1;
    for (std::size_t i = 1; i < hop_index; ++i)
      if (callables[i].name == primary) primary_index = i;
    for (std::size_t r = 0; r < raw[0].size(); ++r)
      deciding.push_back(net(raw[primary_index][r], hop) / candidate_net(raw[0][r], hop, below));
    decision = stats::should_stop(rule, deciding, std::chrono::duration<double>(SteadyClock::now() - start).count());
  }
  freeze.reset();
  profile::add("timing.measured", std::chrono::duration<double>(SteadyClock::now() - start).count());
  if (unfrozen_rounds > 0 && unfrozen_rounds >= round)
    throw Ending{Outcome::protocol_violation, "timing: the sandbox could not be frozen in " + std::to_string(unfrozen_rounds) +
                                                  " of " + std::to_string(unfrozen_rounds + round) + " rounds (" + freeze_error +
                                                  "): its processes kept running while the baselines were timed"};
  result.sandbox_frozen = freezable && unfrozen_rounds == 0;
  if (unfrozen_rounds > 0)
    warn("timing: " + std::to_string(unfrozen_rounds) + " round(s) not counted: the sandbox could not be frozen (" +
         freeze_error + ")");
  if (process_bytes) record_process_memory(*process_bytes);
  if (cuda) {
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
  }
  torch_host::set_tf32(protocol_tf32());
  result.checked_calls = checked;
  result.warmup_rounds = warm_rounds;
  result.rounds = round;
  result.input_sets = round;  // fresh inputs every round
  result.seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
  result.stop_reason = std::string(stats::stop_decision_name(decision));
  if (baseline_waited_in_ms > 0 && !wait_unread) result.cpu_wait_share = baseline_wait_ms / baseline_waited_in_ms;
  // Another kbv judge that held the device but ran nothing on it during the rounds (one kept warm
  // between its candidates, waiting at its gate for this evaluation's turn to end) cannot have made
  // the hops busy: it is no tenant here, and strict's device_busy stays the candidate's.
  if (nvml && !other_processes.empty()) drop_idle_judges(*nvml, rounds_began_us, working_seen, other_processes);
  // The rest is judged once the sandbox has ended (timing_finish.cpp).
  TimingDraft draft;
  draft.result = result;
  for (const auto& c : callables) draft.names.push_back(c.name);
  draft.raw = std::move(raw);
  draft.cuda = cuda;
  draft.gated = gated;
  draft.other_processes = std::move(other_processes);
  draft.nvml = nvml != nullptr;
  draft.nvml_error = nvml_error;
  draft.protocol = protocol_->name;
  draft.candidate_tf32 = protocol_tf32();
  draft.warnings.assign(verdict_.warnings.begin() + static_cast<std::ptrdiff_t>(warnings_before), verdict_.warnings.end());
  timing_draft_ = std::move(draft);
}

}  // namespace kbv::judge

namespace kbv::judge {

// Strict without timing still makes the calls timing would have made (a candidate that turns
// stale after its first N calls must meet them): 8 calls on fresh inputs (more where there are
// more kinds to draw), every output checked. So does verified when it takes strict's rounds
// (judgement.cpp), for its own ModelNew: a wrong output there is incorrect, as in its timing.
void Judgement::check_untimed_calls() {
  enter(Stage::timing);
  std::mt19937_64 rng(job_.secret ^ 0x756e74696d6564ULL ^ static_cast<std::uint64_t>(Clock::now().time_since_epoch().count()));
  const Tolerance tol = tolerance();
  std::vector<DistributionSpec> kinds = timed_distributions();
  for (const auto& h : timed_hidden_distributions()) kinds.push_back(h);  // checked calls, as in timing
  const std::vector<std::size_t> order = untimed_draw_order(kinds.size(), 8, rng);
  for (std::size_t call = 0; call < order.size(); ++call) {
    DistributionSpec spec = kinds[order[call]];
    spec.seed = rng();
    ArgList fresh = guarded(Outcome::problem_error, "get_inputs()", [&] { return inputs_of(spec); });
    // The reference first, as in correctness: it bounds the outputs the judge copies.
    std::vector<at::Tensor> ref_tf32;
    auto ref = guarded(Outcome::problem_error, "Model.forward", [&] { return reference_outputs(fresh, &ref_tf32); });
    CallOutputs out = call_candidate(kTimingSlot, fresh, "untimed call " + std::to_string(call));
    if (out.late_writes) end_unsynchronized("call " + std::to_string(call) + " on fresh " + spec.name + " inputs: " + *out.late_writes);
    if (!protocol_->nan_pattern_must_match && !all_finite(ref)) continue;  // nothing to compare with
    auto cmp = judge_outputs(fresh, ref, ref_tf32, out.snapshot, tol);
    if (!cmp.ok) {
      const std::string what = "call " + std::to_string(call) + " on fresh " + spec.name + " inputs: " + cmp.reason;
      DistributionSpec other = spec;
      other.seed = rng();
      ArgList decoy = guarded(Outcome::problem_error, "get_inputs()", [&] { return inputs_of(other); });
      if (auto why = explain_wrong_output(kTimingSlot, fresh, decoy, ref, ref_tf32, out.snapshot, tol))
        end_unsynchronized("call " + std::to_string(call) + " on fresh " + spec.name + " inputs: " + *why + " (in its window: " + cmp.reason + ")");
      if (!strict()) throw Ending{Outcome::incorrect, "an output on fresh inputs is not the reference of its inputs (" + what + ")"};
      flag(FlagName::result_reuse, what);
      return;
    }
  }
}

}  // namespace kbv::judge
