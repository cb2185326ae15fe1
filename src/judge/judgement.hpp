#pragma once
// One evaluation, as the judge runs it: the trusted side of docs/architecture.md. The judge owns
// the problem, Model, every input, every reference output, the baselines, the timing, the
// comparisons and the verdict; the candidate runs in its sandbox (RunnerClient), which only
// ever hands back outputs. Each phase lives in its own file:
//   judgement.cpp          the stage sequence, outcomes, the verdict
//   problem_phase.cpp      the problem module, Model, the input source; `kbv audit`
//   candidate_phase.cpp    the sandbox: start, build, ModelNew, weights, the build cache
//   candidate_calls.cpp    one call of the candidate on judge-owned inputs, its outputs read back
//   call_window.cpp        what a call is on the device: poison between calls, late writes, the cause named
//   correctness_phase.cpp  every distribution, the strict checks on those calls
//   timing_phase.cpp       candidate and baselines through the same hop, timed outputs checked
//   compile_baseline.cpp   torch.compile(Model) as an extra baseline series, on request
//   hidden_tests.cpp       KernelBench-Verified hidden-test files as extra distributions
//   memory_phase.cpp       peak and resident device memory
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <pybind11/pybind11.h>

#include "core/flags.hpp"
#include "core/job.hpp"
#include "core/protocol.hpp"
#include "core/stage.hpp"
#include "core/verdict.hpp"
#include "cuda/process_memory.hpp"
#include "ipc/message_fields.hpp"
#include "isolation/sandbox_tmp.hpp"
#include "judge/build_cache.hpp"
#include "judge/compare.hpp"
#include "judge/hidden_tests.hpp"
#include "judge/inputs.hpp"
#include "judge/problem_audit.hpp"
#include "judge/report_channel.hpp"
#include "judge/runner_client.hpp"
#include "judge/sandbox_watchdog.hpp"
#include "judge/timing_draft.hpp"
#include "torch_host/backend_state.hpp"
#include "torch_host/device.hpp"
#include "torch_host/forward.hpp"
#include "torch_host/memory.hpp"
#include "torch_host/python_runtime.hpp"
#include "torch_host/shared_tensor.hpp"

namespace kbv::judge {

using torch_host::ArgList;
using Clock = std::chrono::steady_clock;

// Thrown inside a phase to end the evaluation with an outcome; caught once, in run().
struct Ending {
  Outcome outcome;
  std::string reason;
};

// Device memory by holder, as the driver accounts it per process (NVML): the candidate's sandbox
// above kbv's twin, the judge itself, and the device's total.
struct DeviceHolders {
  std::int64_t sandbox = 0;
  std::int64_t judge = 0;
  std::int64_t total = 0;
  std::int64_t others = 0;  // processes that are not this evaluation's (and still exist)
};

// A judge whose allocator holds more than this free gives it back to the device before its
// correctness and timing phases (torch_host::free_cached_memory_over).
constexpr std::int64_t kFreeCacheOverBytes = std::int64_t{1} << 30;

// The text of an error says the device (or an allocator on it) ran out of memory: torch's
// OutOfMemoryError, CUDA's "out of memory", cuBLAS/cuDNN's ALLOC_FAILED.
bool is_out_of_memory(const std::string& text);

// The sandbox holds more than its share of the device: more than the judge holds itself (Model,
// its weights, every input with a pristine copy and the references: all a candidate's computation
// needs and more) and more than an eighth of the device. A judge's out-of-memory is then the
// candidate's doing.
bool sandbox_over_share(const DeviceHolders& h);

// Processes that are not this evaluation's hold more of the device than the candidate's and more
// than an eighth of it: an out-of-memory anywhere in the evaluation is then the machine's, not the
// candidate's nor the problem's (a candidate cannot start processes outside its sandbox).
bool others_crowd_device(const DeviceHolders& h);

// A hoard below the share. A candidate may hold up to the judge's own memory and stay within its
// share, and on a problem whose tensors are a tenth of the device that is enough to make the judge
// run short: the verdict would be kbv's internal_error, which scores leave out. What the sandbox
// held when the judge's allocation failed (read by the out-of-memory hook at that moment, before
// anything could be given back or told) is weighed against what an honest candidate holds.
struct HoardEvidence {
  std::int64_t held = 0;       // the sandbox's device memory above its twin's, at the failure
  std::int64_t allowance = 0;  // what an honest candidate may hold (hoard_allowance)
  std::int64_t shortfall = 0;  // the failed allocation less the device's free memory then; 0 unknown
};
// What an honest candidate may hold between calls, cached blocks included: twice the reference's
// weights and buffers and twice its forward's peak (outputs and temporaries: an unfused rewrite
// keeps more of them, a CUDA graph its static copies), and a process's libraries and workspaces
// beyond its twin's (kHonestProcessBytes). Every byte more lets a hoard starve the judge on more
// problem sizes: a candidate may hold as much as the judge's own memory (its share), and the judge
// needs about four of a problem's tensors.
constexpr std::int64_t kHonestProcessBytes = std::int64_t{512} << 20;
std::int64_t hoard_allowance(std::int64_t reference_resident, std::int64_t reference_forward_peak);
// Less excess than this is never a hoard: the judge that runs short by a few MiB beside an honest
// candidate a little over its allowance is kbv's to fix.
constexpr std::int64_t kHoardFloorBytes = std::int64_t{512} << 20;
// The sandbox's holding above its allowance would have covered the judge's shortfall (and is at
// least kHoardFloorBytes): had the candidate held only what an honest one holds, the judge's
// allocation would have fit. Equivalently: the device had room for the judge's need beside an
// honest candidate's allowance.
bool hoard_starved_judge(const HoardEvidence& e);

// Whose an out-of-memory that ended an evaluation is (blame_starvation applies it):
// the candidate's, when its sandbox holds more than its share or a hoard that starved the judge
// (judge_starved; never for the candidate's own runtime_error, which is its already; beside other
// processes that crowd the device, only a hoard larger than theirs); the machine's, when other
// processes crowd the device; the judge's own working set, when kbv's code
// ran short (internal_error) or get_inputs()/Model did after Model had already run at this size
// (`reference_ran`): the problem fits the device alone, so it is not the problem's fault.
// Otherwise nobody's but as it stands.
enum class OomBlame { as_it_stands, candidate, others, judge };
OomBlame oom_blame(Outcome outcome, bool out_of_memory, const std::optional<DeviceHolders>& holders, bool reference_ran,
                   const std::optional<HoardEvidence>& hoard = std::nullopt);

// The candidate's outputs of one call, as the judge read them after the call's end.
struct CallOutputs {
  std::vector<at::Tensor> snapshot;  // judge-owned copies, taken right after the call's end
  std::vector<at::Tensor> views;     // the sandbox's memory itself (poisoned once the call is over)
  std::vector<int> aliased_inputs;   // per output: the input it views (sandbox's own account), or -1
  // Found by the judge once the call was over (call_window.cpp): outputs written after the
  // window's end (every protocol), inputs changed by the call (strict only).
  std::optional<std::string> late_writes;
  std::optional<std::string> input_mutation;
};

// How a call is made. in_window: the judge's stream held until the call's work is all queued
// (the gate), the inputs written behind it, the outputs read at the window's end. settled: the
// inputs on the device before the call is asked for, the outputs read once the sandbox's device
// work is over: what the output is when nothing races (used only to name a wrong output's cause).
enum class CallMode { in_window, settled };

// What a judge process keeps from one evaluation to the next when it serves several candidates
// (kbv-judge --serve): its interpreter, with torch imported and, on a GPU, its CUDA context (the
// 3-4 s of start-up a cold judge pays per candidate), and the state a fresh interpreter has, which
// each evaluation starts from again. Nothing of a candidate is kept: each has its own sandbox,
// under a uid of its own.
struct JudgeLife {
  std::unique_ptr<torch_host::PythonRuntime> python;
  // The backend switches and TF32 as the interpreter started: restored at each evaluation's start,
  // so nothing an earlier evaluation set (its protocol's TF32, its problem's switches) carries over.
  std::optional<torch_host::BackendState> fresh_backend;
  std::optional<torch_host::Tf32State> fresh_tf32;
  std::uint32_t served = 0;  // evaluations begun in this process: the next one's sequence number
  std::string rehearsed;     // the work rehearsal.hpp last rehearsed (problem, size, precision, protocols)
  // The degenerate-problem audit (trivial_pass) of each draw already audited, by everything that
  // decides it (Judgement::audit_key): a property of the problem and the draw alone, done once per
  // draw. Standard's and verified's draws are the same for every candidate; strict's are each
  // candidate's own (its secret), so those are never found here.
  std::map<std::string, std::string> trivial_passes;
  // What must go when the process ends on another thread's word (the watchdog's end_stuck): the
  // next candidate's runners, started ahead.
  std::function<void()> before_exit;
};

class Judgement {
 public:
  Judgement(const WorkerJob& job, ReportChannel& channel, JudgeLife& life);
  ~Judgement();
  // Starts the sandbox and the twin: call before anything starts threads or CUDA (they are
  // forked). They import their interpreters and wait for their jobs, which begin_turn() sends.
  // Failures are kept and reported by run(). `ahead`: while another evaluation has the device (a
  // warm judge's next candidate), so a failure is tried once more at the turn.
  void start_runners(bool ahead = false);
  // Started ahead (kbv run --prestart): the judge's interpreter now, without touching CUDA, then
  // block on `gate_fd` until kbv says the device is this evaluation's. False: kbv closed the gate
  // without opening it (it is stopping).
  bool start_ahead(int gate_fd);
  // The device is this evaluation's: its deadlines count from now; the build cache entry is
  // checked and handed to the sandbox (not earlier: the evaluation before this one may still be
  // loading the same entry), and the runners get their jobs.
  void begin_turn();
  // kbv closed the gate unopened: stop the runners and remove what they were given.
  void abandon();
  // One verdict per protocol of the job, in its order, all served by the one sandbox. Fewer when
  // a protocol ended in a way that leaves the sandbox unfit for the next (anything but a
  // finished evaluation or an `incorrect` found between calls): kbv evaluates the rest with a
  // fresh judge. Stages that do not depend on the protocol (the problem, the build) end every
  // protocol alike.
  std::vector<Verdict> run();
  // After run() and its verdicts: the sandbox and the twin are wholly gone, and the judge has
  // let go of their memory and of its own cached device memory; false when it cannot say so.
  bool device_work_done();

 private:
  // judgement.cpp
  // What every protocol shares (the problem, the device, the candidate's build); false: nothing
  // more to do (kbv audit).
  bool shared_stages();
  void begin_protocol(const Protocol& protocol);
  void protocol_stages();  // while the sandbox serves this protocol
  void finish_stages();    // once the sandbox has ended
  // Runs `body`; an Ending (or a runner's failure) becomes verdict_'s outcome. True: it got through.
  template <typename F>
  bool settle(F&& body);
  void enter(Stage stage);
  void flag(FlagName name, const std::string& evidence);
  void warn(const std::string& text) { verdict_.warnings.push_back(text); }
  bool strict() const { return protocol_->integrity_checks; }
  bool protocol_tf32() const { return protocol_->baseline == BaselineKind::eager_tf32_on; }
  void check_speed_bound();
  void check_custom_kernel();

  // judge_evidence.cpp: figures from the judge's own evidence.
  // custom_kernel: a library of the candidate's build-cache entry is mapped in one of its
  // sandbox's processes (not the sandbox's report of what it built, `build`, which is only
  // cross-checked where given: right after the import). Looked at again once ModelNew is built
  // and once its correctness calls ran (an extension loaded in __init__ or on first use).
  void observe_custom_kernel(const BuildResult* build = nullptr);
  // Per-process device memory from the driver; nullopt without a GPU, a sandbox or NVML.
  std::optional<DeviceHolders> device_holders();
  // The holders in the driver's per-process list `used` (total left 0); the pids of the others
  // into `*others` when given. Needs the sandbox and the twin.
  DeviceHolders holders_in(const std::map<pid_t, std::int64_t>& used, std::set<pid_t>* others = nullptr) const;
  // An out-of-memory in the judge (`what` says so) while the sandbox holds more than its share of
  // the device: the candidate's outcome (runtime_error, flag judge_starved). nullopt otherwise.
  // `any_failure`: whatever the error says (a library under memory pressure may not say so).
  std::optional<Ending> starvation_ending(const std::string& what, bool any_failure = false);
  // The candidate's ending (runtime_error, judge_starved) when the judge's own out-of-memory `error`
  // is the sandbox's doing by the rule blame_starvation applies at the end; nullopt otherwise. For a
  // step whose failure the judge would otherwise only warn about (the degenerate audit).
  std::optional<Ending> hoard_ending(const std::string& error);
  // What the blame of an out-of-memory `error` weighs: the device's holders at that failure (or
  // now), the sandbox's hoard against an honest allowance where it is under its share, and when
  // they were read (words for the evidence).
  struct StarvationReading {
    std::optional<DeviceHolders> holders;
    std::optional<HoardEvidence> hoard;
    std::string when;
  };
  StarvationReading read_starvation(const std::string& error);
  // The holders when the allocation `error` reports failed (the out-of-memory hook's reading; that
  // failure into `*failure`), else as they are now (`*failure` empty); nullopt without driver figures.
  std::optional<DeviceHolders> holders_for(const std::string& error, std::optional<torch_host::OutOfMemoryMoment>* failure);
  // What the sandbox held against an honest candidate's allowance (`holders`, `failure`:
  // holders_for's); nullopt before the reference ran (nothing to weigh it by).
  std::optional<HoardEvidence> hoard_evidence(const DeviceHolders& holders, const std::optional<torch_host::OutOfMemoryMoment>& failure);
  // The out-of-memory hook: who held the device when one of the judge's allocations failed.
  void note_holders_at_failure() noexcept;
  // settle()'s last word: a problem_error or internal_error that is such an out-of-memory
  // becomes the candidate's; one while others crowd the device, or the problem's after its
  // Model already ran at this size here, is kbv's (internal_error: evaluate again with room).
  void blame_starvation();
  // The reference's outputs, as the bound on the candidate's (refuse_oversized_outputs).
  void note_reference_outputs(const std::vector<at::Tensor>& outputs);
  // A call's outputs holding more elements' bytes than the reference's ever did: incorrect,
  // ended before the judge makes its own copy of them (whose size the candidate would choose).
  void refuse_oversized_outputs(const std::vector<at::Tensor>& views, const std::string& what) const;
  // What the judge's own device memory is made of, for a verdict that says it ran short (`error`,
  // its reason: the allocator's figures at the failure are given when it is that failure).
  std::string judge_memory_note(const std::string& error) const;
  [[noreturn]] void end_with_runner_error(const RunnerError& e, const std::string& what);

  // problem_phase.cpp
  void load_problem();
  void build_reference();
  void load_hidden();
  // rehearsal.hpp, on this evaluation's problem, device and protocols.
  void rehearse();
  // The protocol's distributions with the hidden-test file's at secret places among them.
  std::vector<DistributionSpec> correctness_distributions() const;
  // What timed rounds and strict's untimed calls draw from (each with a fresh seed): the
  // protocol's distributions but reinit_params; and, checked but never counted, the hidden
  // lists shaped like get_inputs().
  std::vector<DistributionSpec> timed_distributions() const;
  std::vector<DistributionSpec> timed_hidden_distributions() const;
  ArgList inputs_of(const DistributionSpec& spec);
  void audit_problem();
  nlohmann::json init_inputs_json() const;
  static std::uint64_t model_seed();

  // candidate_phase.cpp
  void await_build();
  // The sandbox's answer to its job is waiting: note when the judge first saw it (import_seen_).
  void note_waiting_answer();
  void take_timing_rounds(const TimingDraft& rounds);
  void add_sandbox_profile(const nlohmann::json& reply);
  void construct_candidate();
  void hand_over_weights();
  void finish_build_only();
  // A failed build that says the disk was full: an internal_error only if, its sandbox stopped
  // and its entry emptied, the judge still sees the build root's disk full (build_cache.hpp).
  void end_if_host_disk_full(const std::string& message, const std::string& log_tail);

  // candidate_calls.cpp
  void bind_slot(std::uint32_t slot, const ArgList& like);
  // Binds the slot to the values' layout when it differs (a new block, poisoned).
  void bind_if_needed(std::uint32_t slot, const ArgList& values);
  // Bound, then the values copied in and on the device (the memory phase: no window there).
  void write_inputs(std::uint32_t slot, const ArgList& values);
  // The values copied into the bound slot on the judge's stream (behind the gate, when closed).
  void copy_inputs(std::uint32_t slot, const ArgList& values);
  // One call on `inputs` (the judge's pristine copy), made as `mode` says.
  CallOutputs call_candidate(std::uint32_t slot, const ArgList& inputs, const std::string& what,
                             CallMode mode = CallMode::in_window);
  void wait_for_stream(const std::string& what, RunnerClient* runner, std::uint32_t seq);
  std::vector<at::Tensor> slot_inputs(std::uint32_t slot) const;

  // call_window.cpp
  // The slot bound for `inputs` and holding poison, finished on the device: call before asking
  // for a call (and before closing a gate).
  void ready_slot(std::uint32_t slot, const ArgList& inputs);
  void poison_slot(std::uint32_t slot);
  // Once a call is over on the device (its answers in, the judge's stream synchronised): late
  // writes (in_window: a settled call's snapshot is already the outputs once over) and (strict)
  // input mutation into `out`, then poison into the inputs and the outputs.
  void close_call(std::uint32_t slot, const ArgList& pristine, CallOutputs& out, CallMode mode);
  // A wrong output of a call made in its window: the same inputs again as a settled call. Right
  // then: the candidate's work does not follow the caller's stream, and the evidence says so.
  // `decoy`: other inputs of the same kind (a fresh draw), called first.
  std::optional<std::string> explain_wrong_output(std::uint32_t slot, const ArgList& inputs, const ArgList& decoy,
                                                  const std::vector<at::Tensor>& ref, const std::vector<at::Tensor>& ref_tf32,
                                                  const std::vector<at::Tensor>& wrong, const Tolerance& tol);
  // Ends the protocol `incorrect` with unsynchronized_work (every protocol): `evidence` says how.
  [[noreturn]] void end_unsynchronized(const std::string& evidence);

  // correctness_phase.cpp
  void check_correctness();
  std::vector<at::Tensor> reference_outputs(const ArgList& inputs, std::vector<at::Tensor>* tf32_out);
  // The protocol's whole rule for one call's outputs on `inputs`: the tolerance against the fp32
  // (or TF32) reference, then, where the protocol has it, the numerics model (`numerics` gets it).
  OutputComparison judge_outputs(const ArgList& inputs, const std::vector<at::Tensor>& ref,
                                 const std::vector<at::Tensor>& ref_tf32, const std::vector<at::Tensor>& out,
                                 const Tolerance& tol, std::optional<NumericsCheck>* numerics = nullptr);
  OutputComparison tolerance_outputs(const std::vector<at::Tensor>& ref, const std::vector<at::Tensor>& ref_tf32,
                                     const std::vector<at::Tensor>& out, const Tolerance& tol) const;
  void check_candidate_call(const std::string& dist, const CallOutputs& out);
  std::vector<at::Tensor> float64_outputs(const ArgList& inputs);
  NumericsCheck numerics_against_truth(const ArgList& inputs, const std::vector<at::Tensor>& ref,
                                       const std::vector<at::Tensor>& ref_tf32, const std::vector<at::Tensor>& out);
  void flag_degenerate(const CorrectnessResult& result, bool skipped_for_the_candidate);
  // trivial_pass of `spec`'s draw, from the judge's earlier candidates when one had the same draw.
  // `weights`: Model's parameters as built ("init") or as a reinit_params draw left them.
  std::string audited_trivial_pass(const DistributionSpec& spec, const std::string& weights, const ArgList& inputs,
                                   const std::vector<at::Tensor>& ref, const Tolerance& tol);
  // What decides the audit of `spec`'s draw: the problem and hidden-test files' contents, the
  // size, precision and device, the distribution and its seed, Model's weights (built from kbv's
  // constant seed, then `weights`), and the tolerance it is audited with.
  std::string audit_key(const DistributionSpec& spec, const std::string& weights, const Tolerance& tol) const;
  Tolerance tolerance() const;

  // timing_phase.cpp
  void measure_time();  // the rounds, into timing_draft_ (the sandbox stays alive)
  // From `others` (processes on the device that are not this evaluation's), the other kbv judges
  // that ran nothing on the device since `since` (NVML's per-process samples, with those already
  // seen in `working`): kept warm between candidates, they wait for this evaluation's turn to end.
  void drop_idle_judges(const cuda::ProcessMemory& nvml, std::uint64_t since, std::set<pid_t> working,
                        std::set<pid_t>& others) const;
  // timing_finish.cpp, once the sandbox has ended.
  std::vector<double> idle_hop_samples(bool gated);
  void finish_timing(const TimingDraft& draft, const IdleHops& idle);
  // compile_baseline.cpp: torch.compile(Model), called once on `inputs`; sets compiled_ unless it
  // fails (a warning). Returns the seconds it took.
  std::optional<double> compile_reference(const ArgList& inputs);
  void check_untimed_calls();

  // memory_phase.cpp
  void measure_memory();
  // The sandbox's processes' device memory as the judge saw it during timing: into the candidate's
  // memory and the footprint ratio (no-op when memory was not measured).
  void record_process_memory(std::int64_t bytes);

  const WorkerJob& job_;
  ReportChannel& channel_;
  const Protocol* protocol_;
  Precision precision_;
  Verdict verdict_;
  Verdict shared_;  // the verdict as the shared stages left it: each protocol's starts from it
  std::optional<TimingDraft> timing_draft_;
  // Strict's rounds, once its stages all ran: a later protocol with the same setting takes them.
  std::optional<TimingDraft> strict_rounds_;
  Clock::time_point started_;
  Clock::time_point build_deadline_, run_deadline_;
  at::Device device_{at::kCPU};
  JudgeLife& life_;  // life_.python: the judge's interpreter (this evaluation's or an earlier one's)
  const std::uint32_t sequence_;  // this evaluation's place in its judge's life (0: the first)
  // The interpreter is up: state as a fresh judge's (JudgeLife), and the provenance it gives.
  void enter_interpreter();
  std::string memory_method_;
  pybind11::module_ problem_;
  pybind11::object init_inputs_;
  pybind11::object reference_;
  InputSource source_;
  HiddenTests hidden_;  // KernelBench-Verified hidden-test file, when the job names one
  std::optional<pybind11::object> compiled_;
  // The backend switches as they were once Model was built; restored before every baseline sample.
  std::optional<torch_host::BackendState> backend_state_;  // torch.compile(Model), when the torch_compile series was asked for

  // The candidate's side, as the judge sees it.
  std::unique_ptr<RunnerClient> sandbox_;
  std::unique_ptr<RunnerClient> twin_;
  std::unique_ptr<cuda::ProcessMemory> nvml_;  // opened on first use (device_holders)
  std::optional<std::string> runner_start_error_;
  std::int64_t sandbox_uid_ = -1;      // the sandbox's uid outside its namespace
  nlohmann::json sandbox_hello_, twin_hello_;  // their jobs, sent by begin_turn()
  std::optional<Clock::time_point> hello_sent_;  // when the sandbox got its job (its import began)
  std::optional<Clock::time_point> import_seen_;  // the sandbox's answer was waiting (seen during the rehearsal)
  bool runners_gone_ = false;  // stop_runners() saw every process of the sandbox and the twin gone
  void restart_clock();
  // Stops the sandbox and the twin, removes the sandbox's private tmp; what went wrong doing so.
  std::vector<std::string> stop_runners();
  bool started_ahead_ = false;  // the runners were started while the device was another's
  // Started ahead: a runner has ended since, or the candidate file is not what was hashed then.
  bool runners_went_stale() const;
  isolation::SandboxTmp sandbox_tmp_;  // its private tmp on the host: removed when the evaluation ends
  BuildCacheEntry cache_;
  std::unique_ptr<BuildCacheLock> cache_lock_;  // from begin_turn() until the build is recorded (or the sandbox stopped)
  std::map<std::string, std::vector<std::int64_t>> candidate_state_;  // ModelNew's state_dict: name -> shape
  int weights_copied_ = 0, weights_entries_ = 0;
  std::vector<std::optional<torch_host::SharedBlock>> slots_;
  std::vector<torch_host::SharedBlock> retired_slots_;  // replaced by a rebind, kept until the end
  std::vector<nlohmann::json> bound_values_;  // per slot: the "args" the sandbox was given
  std::vector<bool> slot_poisoned_;           // per slot: holds poison, finished on the device
  // Calls outside the timing are gated (kCallGateTimeout each), unless CUDA refused a gate.
  bool calls_gated_ = true;
  // A call made only to name a wrong output's cause failed: the sandbox may be unfit to serve
  // the next protocol.
  bool sandbox_unfit_ = false;
  // Model ran on this evaluation's inputs at the job's size: the problem fits the device alone,
  // so running out of memory later is what the judge and the sandbox hold (blame_starvation).
  bool reference_ran_ = false;
  // The most bytes the reference's outputs of one call have held (every element, dense): what an
  // honest call returns. Outputs claiming more (an expanded or overlapping view of a few bytes
  // whose copy would be any size) are refused before the judge copies them.
  std::int64_t reference_output_bytes_ = 0;
  // The most one fp32 call of the reference needed beyond its inputs (its outputs and temporaries,
  // by the allocator's peak): what an honest candidate may keep is weighed against it.
  std::int64_t reference_forward_peak_ = 0;
  std::int64_t reference_resident_ = 0;     // the most the reference's weights and buffers held
  // The holders when one of the judge's allocations failed, by the failure's sequence number.
  std::optional<std::pair<std::uint64_t, DeviceHolders>> holders_at_failure_;
  // The last timing's hops were busy while processes that are not this evaluation's had the
  // device: its samples are not evidence of anything the candidate did (check_speed_bound).
  bool timed_beside_others_ = false;
  std::unique_ptr<torch_host::OutputReader> reader_;
  void* stream_ = nullptr;  // the judge's CUDA stream for every candidate call (cudaStream_t)
  std::int64_t output_bytes_ = 0;  // what the candidate must write per call (implausible_speed)
  bool determinism_checked_ = false;

  // Last, so it is destroyed (its thread joined) before the runners it watches. Ends the sandbox
  // when the judge overruns its deadline inside a driver call, and ends the judge when it is held
  // inside one after the sandbox has gone (sandbox_watchdog.hpp).
  std::unique_ptr<SandboxWatchdog> watchdog_;
  // On the watchdog's thread: the verdicts settled so far and that of the protocol under way,
  // from what the main thread does not change while it runs a protocol; then the runners' end,
  // and exit.
  [[noreturn]] void end_stuck(int sandbox_status);
  std::atomic<const Protocol*> running_protocol_{nullptr};
  std::atomic<Stage> running_stage_{Stage::setup};
  // Failing verdicts already final (a protocol that ended before its sandbox's end, e.g.
  // incorrect): end_stuck sends them, so a candidate cannot drop a caught protocol's verdict and
  // have it evaluated again by ending its process in the next one.
  std::mutex settled_mutex_;
  std::vector<Verdict> settled_;
};

// Runs `body`; turns Python, c10 and std exceptions into an Ending with `outcome`.
template <typename F>
auto guarded(Outcome outcome, const std::string& what, F&& body) -> decltype(body());

std::string first_line(const std::string& text, std::size_t max = 400);
std::string join(const std::vector<std::string>& items, const char* sep = ", ");

}  // namespace kbv::judge

#include "judge/guarded.inl"
