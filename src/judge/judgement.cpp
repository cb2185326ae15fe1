#include "judge/judgement.hpp"
#include "judge/profile.hpp"
#include "judge/torch_pch.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string_view>

#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include "core/sha256.hpp"
#include "core/speed_bound.hpp"
#include "ipc/runner_protocol.hpp"
#include "isolation/remove_tree.hpp"
#include "isolation/sandbox_tmp.hpp"
#include "judge/rehearsal.hpp"
#include "judge/sandbox_setup.hpp"
#include "torch_host/device.hpp"
#include "torch_host/memory.hpp"

namespace fs = std::filesystem;

namespace kbv::judge {
namespace {

// How long the watchdog lets the judge overrun a deadline, or stay held after the sandbox ended.
constexpr std::chrono::seconds kWatchdogGrace{10};

// The sandbox compiles a load_inline CUDA source with its lean torch/types.h first, and main.cpp
// with its lean binding (sandbox/build_hooks), unless KBV_LEAN_PRELUDE / KBV_LEAN_BINDING=off:
// for measuring, A against B.
bool lean_wanted(const char* variable) {
  const char* env = std::getenv(variable);
  return !(env && std::string_view(env) == "off");
}

}  // namespace

std::string first_line(const std::string& text, std::size_t max) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > max ? line.substr(0, max) + "..." : line;
}

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : sep) + item;
  return out;
}

Judgement::Judgement(const WorkerJob& job, ReportChannel& channel, JudgeLife& life)
    : job_(job),
      channel_(channel),
      protocol_(&protocol_by_name(job_protocols(job).front())),
      precision_(precision_from_name(job.precision)),
      life_(life),
      sequence_(life.served++) {
  restart_clock();
}

Judgement::~Judgement() {
  torch_host::set_out_of_memory_hook(nullptr);
  // A judge that serves another candidate next: the calls' stream goes (after its work), and the
  // judge's current stream is the default again, as a fresh judge's.
  if (stream_) {
    cudaStreamSynchronize(static_cast<cudaStream_t>(stream_));
    c10::cuda::setCurrentCUDAStream(c10::cuda::getDefaultCUDAStream(device_.index()));
    cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
  }
}

void Judgement::enter_interpreter() {
  if (!life_.python) {
    enter(Stage::python);
    life_.python = std::make_unique<torch_host::PythonRuntime>();
  }
  if (!life_.fresh_backend) {
    life_.fresh_backend = torch_host::capture_backend_state();
    life_.fresh_tf32 = torch_host::read_tf32();
  } else {
    torch_host::restore_backend_state(*life_.fresh_backend);
    torch_host::restore_tf32(*life_.fresh_tf32);
  }
}

void Judgement::restart_clock() {
  started_ = Clock::now();
  auto after = [&](double s) { return started_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)); };
  build_deadline_ = after(job_.compile_timeout_seconds);
  run_deadline_ = after(job_.compile_timeout_seconds + job_.run_timeout_seconds);
}

void Judgement::enter(Stage stage) {
  running_stage_ = stage;
  verdict_.stage = std::string(stage_name(stage));
  channel_.stage(verdict_.stage);
}

void Judgement::flag(FlagName name, const std::string& evidence) {
  std::string n(flag_name(name));
  for (const auto& f : verdict_.flags)
    if (f.name == n) return;  // the first evidence is kept
  verdict_.flags.push_back({n, evidence});
}

void Judgement::start_runners(bool ahead) {
  started_ahead_ = started_ahead_ || ahead;
  if (job_.candidate_path.empty()) return;  // kbv audit: the problem alone
  try {
    // What judges killed outright left behind goes first (once per judge process).
    static const std::size_t swept = isolation::remove_abandoned_sandbox_tmps();
    (void)swept;
    sandbox_tmp_ = isolation::SandboxTmp::make();
    const std::string tmp = sandbox_tmp_.path();
    // The sandbox imports its own copy, made here: the folder the candidate came from (other
    // candidates, their verdicts) is never among what it must read. The hash is the copy's.
    const std::string own_copy = copy_candidate_into(job_.candidate_path, tmp);
    std::string hash = sha256_file(own_copy);
    fs::path root = job_.build_root.empty() ? fs::temp_directory_path() / "kbv-build" : fs::path(job_.build_root);
    cache_ = build_cache_entry(root.string(), hash);
    build_cache_create(cache_);  // the sandbox's writable folder must exist when it starts
    isolation::SandboxSpec spec = candidate_sandbox_spec(job_, cache_, tmp, sequence_);
    std::uint32_t uid = isolation::resolve_outer_uid(spec);
    spec.outer_uid = uid;
    sandbox_uid_ = uid;
    // Only a sandbox of another uid may read the shared PCH: one of ours could rewrite it.
    std::string pch = uid != ::geteuid() ? torch_pch_dir(root.string()) : "";
    if (!pch.empty()) spec.must_read.push_back(pch);
    if (::geteuid() == 0 && ::chown(tmp.c_str(), uid, uid) != 0)
      throw std::runtime_error("cannot hand the private tmp folder to the sandbox uid");
    const bool cuda = at::Device(job_.device).is_cuda();
    const bool device_free = device_free_build(job_);
    // CPU outputs come back through the arena; sparse, so its size costs nothing until written.
    std::size_t arena = cuda ? (64u << 20) : (std::size_t{8} << 30);
    sandbox_ = RunnerClient::start("candidate", spec, arena);
    verdict_.isolation = sandbox_->isolation();
    // The twin serves the timed calls (and, on a GPU, the memory evidence): a CPU evaluation
    // without timing has no use for it, and starting it costs that evaluation ~9% of its CPU.
    if (!job_.build_only && (job_.timing.enabled || cuda)) twin_ = RunnerClient::start("twin", twin_spec(), 1 << 20);
    sandbox_hello_ = {{"type", "hello"},
                      {"device", job_.device},
                      {"precision", job_.precision},
                      {"tf32", protocol_tf32()},
                      {"candidate", {{"path", own_copy}, {"module", "kbv_candidate"}}},
                      {"build", {{"dir", cache_.dir}, {"source_hash", hash}, {"log", cache_.log}, {"cuda_arch", device_free ? job_.build_cuda_arch : ""}, {"torch_pch", pch},
                                 {"lean_prelude", lean_wanted("KBV_LEAN_PRELUDE")}, {"lean_binding", lean_wanted("KBV_LEAN_BINDING")}}},
                      {"build_only", job_.build_only},
                      {"device_free", device_free},
                      {"arena_bytes", arena}};
    // The sandbox's own step seconds, for the judge's profile only (never a verdict's).
    if (profile::enabled()) sandbox_hello_["profile"] = true;
    twin_hello_ = {{"type", "hello"}, {"device", job_.device}, {"arena_bytes", 1 << 20}};
  } catch (const std::exception& e) {
    runner_start_error_ = e.what();
  }
}

bool Judgement::start_ahead(int gate_fd) {
  started_ahead_ = true;
  enter_interpreter();
  enter(Stage::waiting);
  char go = 0;
  ssize_t n;
  do n = ::read(gate_fd, &go, 1);
  while (n < 0 && errno == EINTR);
  return n == 1;
}

std::vector<std::string> Judgement::stop_runners() {
  std::vector<std::string> warnings;
  if (sandbox_) sandbox_->stop();
  build_cache_close(cache_);
  // Whatever its build left beyond any real build's size is given back to the disk now.
  if (auto w = build_cache_cap(cache_)) warnings.push_back(*w);
  cache_lock_.reset();  // no sandbox of ours uses the entry now
  if (twin_) twin_->stop();
  // Its end speaks for every process the sandbox started only when they were in its PID namespace
  // or its cgroup; the twin is kbv's own and starts none.
  const auto gone = [](const RunnerClient& r) { return r.launched().ended.value_or(false); };
  const bool contained = sandbox_ && (sandbox_->isolation().pid_namespace || !sandbox_->isolation().cgroup.empty());
  runners_gone_ = (!sandbox_ || (contained && gone(*sandbox_))) && (!twin_ || gone(*twin_));
  if (!sandbox_tmp_.empty()) {
    // Nothing of a candidate outlives its evaluation on disk.
    auto removed = sandbox_tmp_.remove();
    if (!removed.ok) warnings.push_back("the candidate's private tmp was not fully removed: " + removed.error);
  }
  return warnings;
}

void Judgement::abandon() {
  stop_runners();
  sandbox_.reset();
  twin_.reset();
  sandbox_tmp_ = {};
}

bool Judgement::runners_went_stale() const {
  if (sandbox_->ended_status() || (twin_ && twin_->ended_status())) return true;
  try {
    return sha256_file(job_.candidate_path) != sandbox_hello_.at("build").value("source_hash", "");
  } catch (const std::exception&) {
    return true;  // unreadable now: start again, and let that report it
  }
}

void Judgement::begin_turn() {
  enter(Stage::setup);  // kbv's clock: from here on this is the evaluation's own time
  restart_clock();
  // Started ahead, the runners were launched while another evaluation ran, whose candidate may
  // have held what a launch needs (without root, the process count of the uid they share): the
  // device is ours now, so try once more rather than fail this candidate for it.
  // So too runners that ended while they waited (another process of a shared uid, the OOM killer),
  // or a candidate file that changed since its hash named the build-cache entry.
  if (started_ahead_ && !runner_start_error_ && sandbox_ && runners_went_stale()) runner_start_error_ = "stale";
  if (started_ahead_ && runner_start_error_ && !job_.candidate_path.empty()) {
    abandon();
    runner_start_error_.reset();
    start_runners();
  }
  if (!sandbox_ || runner_start_error_) return;
  try {
    profile::Step step("turn.cache_and_jobs");
    // Another evaluation of this source (another kbv eval, a kbv run) may be building into the
    // entry: it is handed over only once that build is recorded, and this one loads it. The wait
    // is not the candidate's build time.
    cache_lock_ = std::make_unique<BuildCacheLock>(cache_);
    restart_clock();
    if (auto changed = build_cache_verify(cache_))
      flag(FlagName::build_cache_tampered, "the build cache entry did not match what kbv recorded after its build (" + *changed +
                                               "): it was emptied and rebuilt");
    build_cache_hand_over(cache_, sandbox_uid_);
    // Build first, while the judge starts its own interpreter (unless it started ahead): the
    // sandbox imports the candidate (and compiles its extensions) now.
    // fds: the hop page, the arena (RunnerClient keeps them mapped on our side too).
    sandbox_->send(sandbox_hello_, {sandbox_->hop_fd(), sandbox_->arena().fd()});
    hello_sent_ = Clock::now();
    if (twin_) twin_->send(twin_hello_, {twin_->hop_fd(), twin_->arena().fd()});
    // A thread, so only now: every fork is done.
    watchdog_ = std::make_unique<SandboxWatchdog>(kWatchdogGrace, [this] { sandbox_->kill_now(); });
    watchdog_->arm(std::max(build_deadline_, run_deadline_));
  } catch (const std::exception& e) {
    runner_start_error_ = e.what();
  }
}

[[noreturn]] void Judgement::end_with_runner_error(const RunnerError& e, const std::string& what) {
  if (watchdog_ && watchdog_->fired())
    throw Ending{Outcome::timeout, what + ": the judge's wait on the device outlived the time limit while the candidate's "
                                          "process held its CUDA context; kbv ended the process (" + first_line(e.what()) + ")"};
  switch (e.kind) {
    case RunnerError::Kind::timeout:
      if (sandbox_) sandbox_->stop(2.0);  // its Python stacks go to the output first
      throw Ending{Outcome::timeout, what + ": no answer within the time limit (" + first_line(e.what()) + ")"};
    case RunnerError::Kind::died:
      throw Ending{Outcome::crashed, what + ": the candidate's process " + first_line(e.what())};
    case RunnerError::Kind::protocol:
      throw Ending{Outcome::protocol_violation, what + ": " + first_line(e.what())};
  }
  throw Ending{Outcome::crashed, what};
}

void Judgement::end_stuck(int sandbox_status) {
  const Protocol* protocol = running_protocol_.load();
  const std::string stage(stage_name(running_stage_.load()));
  const std::string held = "the candidate's process ended (" + describe_wait_status(sandbox_status) +
                           ") and the judge, held up in a call of its own (on a GPU: the driver, after a fault in the "
                           "candidate's context), had not noticed " + std::to_string(kWatchdogGrace.count()) +
                           " s later; kbv ended the evaluation";
  std::vector<Verdict> verdicts;
  {
    std::lock_guard<std::mutex> lock(settled_mutex_);
    verdicts = settled_;
  }
  const bool settled = std::any_of(verdicts.begin(), verdicts.end(), [&](const Verdict& v) { return v.protocol == protocol->name; });
  if (!settled) {
    Verdict v = shared_;
    v.protocol = protocol->name;
    v.protocol_version = protocol->version;
    v.stage = stage;
    if (watchdog_->fired()) {
      v.outcome = Outcome::timeout;
      v.reason = "stage '" + stage + "': the time limit passed while the candidate's context held the device; " + held;
    } else if (WIFEXITED(sandbox_status) && WEXITSTATUS(sandbox_status) == ipc::kRunnerExitAfterDeviceError) {
      // The code the sandbox exits with after it reports a CUDA error at synchronisation (or the
      // candidate's own exit with it: a failure either way).
      v.outcome = Outcome::runtime_error;
      v.reason = "stage '" + stage + "': the candidate's call ended as after a CUDA error (exit code " +
                 std::to_string(ipc::kRunnerExitAfterDeviceError) + "); " + held;
    } else {
      v.outcome = Outcome::crashed;
      v.reason = "stage '" + stage + "': " + held;
    }
    verdicts.push_back(std::move(v));
  }
  // The verdicts first: the runners' end below could wait on a driver a fault left stuck, and kbv
  // kills a judge that has not exited 30 s after its verdicts. Protocols that passed their stages
  // before this one need the device to finish: they send nothing, and kbv evaluates them again
  // with a fresh judge.
  for (const auto& v : verdicts) channel_.verdict(v);
  // The runners' end as at any other (cgroup, private tmp; no CUDA call), too late for its warnings;
  // and a warm judge's next candidate's, started ahead.
  stop_runners();
  if (life_.before_exit) life_.before_exit();
  std::fflush(nullptr);
  std::_Exit(0);
}

template <typename F>
bool Judgement::settle(F&& body) {
  try {
    body();
    return true;
  } catch (const Ending& end) {
    verdict_.outcome = end.outcome;
    verdict_.reason = end.reason;
  } catch (const RunnerError& e) {
    try {
      end_with_runner_error(e, "stage '" + verdict_.stage + "'");
    } catch (const Ending& end) {
      verdict_.outcome = end.outcome;
      verdict_.reason = end.reason;
    }
  } catch (const ipc::ProtocolError& e) {
    verdict_.outcome = Outcome::protocol_violation;
    verdict_.reason = std::string("the candidate's sandbox sent invalid data: ") + e.what();
  } catch (const nlohmann::json::exception& e) {
    // The judge builds its own JSON without reading back; a JSON error while the sandbox runs
    // is its data read where a check was missing (a kbv bug, but never the candidate's win).
    verdict_.outcome = sandbox_ ? Outcome::protocol_violation : Outcome::internal_error;
    verdict_.reason = std::string("malformed data from the candidate's sandbox: ") + e.what();
  } catch (const std::exception& e) {
    // Anything else (a c10::Error outside a guarded step) is kbv's, and this protocol's alone:
    // the protocols finished before it keep their verdicts.
    verdict_.outcome = Outcome::internal_error;
    verdict_.reason = std::string("kbv-judge internal error: ") + e.what();
  }
  // The judge short of device memory while the sandbox holds more than its share is the
  // candidate's doing, never the problem's or kbv's.
  blame_starvation();
  return false;
}

std::vector<Verdict> Judgement::run() {
  // An exception out of here becomes main()'s verdict: the watchdog must not send one beside it.
  struct DisarmOnThrow {
    SandboxWatchdog* dog;
    ~DisarmOnThrow() {
      if (dog && std::uncaught_exceptions() > 0) dog->disarm();
    }
  } disarm_on_throw{watchdog_.get()};
  const std::vector<std::string> names = job_protocols(job_);
  verdict_.protocol = protocol_->name;
  verdict_.protocol_version = protocol_->version;
  verdict_.precision = std::string(precision_name(precision_));
  verdict_.candidate = {job_.candidate_path, ""};
  std::vector<Verdict> out;
  bool more = false;
  if (settle([&] { more = shared_stages(); }) && !more) verdict_.outcome = Outcome::correct;  // kbv audit
  if (!more) {
    // Nothing here depended on the protocol: the same end for each.
    for (auto& w : stop_runners()) warn(w);
    if (sandbox_) verdict_.isolation = sandbox_->isolation();
    verdict_.wall_seconds = std::chrono::duration<double>(Clock::now() - started_).count();
    for (const auto& name : names) {
      Verdict v = verdict_;
      v.protocol = name;
      v.protocol_version = protocol_by_name(name).version;
      out.push_back(std::move(v));
    }
    return out;
  }
  shared_ = verdict_;
  // Each protocol's verdict waits for the sandbox's end: its timing is judged against the idle
  // device, and an integrity flag decides its outcome only after that.
  struct Pass {
    const Protocol* protocol;
    Verdict verdict;
    std::optional<TimingDraft> timing;
    std::int64_t output_bytes;
    bool served;  // its stages in the sandbox all ran
    Clock::time_point started;
  };
  std::vector<Pass> passes;
  for (const auto& name : names) {
    profile::set_protocol(name);
    begin_protocol(protocol_by_name(name));
    const bool served = settle([&] { protocol_stages(); });
    // Strict's rounds were timed under every check another protocol's would be: one that times
    // the same candidate setting against the same headline baseline (verified) takes them.
    if (served && strict() && timing_draft_ && !strict_rounds_) strict_rounds_ = *timing_draft_;
    if (!served) {
      std::lock_guard<std::mutex> lock(settled_mutex_);
      settled_.push_back(verdict_);
    }
    passes.push_back({protocol_, verdict_, std::move(timing_draft_), output_bytes_, served, started_});
    // After anything but an output found wrong between calls, the sandbox may be mid-call, dead
    // or its device broken: the other protocols get a sandbox of their own (a fresh judge).
    // So too after an incorrect whose explaining call failed (call_window.cpp).
    if (!served && (verdict_.outcome != Outcome::incorrect || sandbox_unfit_)) break;
  }
  enter(Stage::done);
  profile::set_protocol("done");
  if (watchdog_) watchdog_->disarm();
  // The sandbox ends first: then nothing of the candidate is left on the device (its context
  // went with its processes), and the twin's null call is the hop of an idle device. The twin is
  // kbv's own: the idle hops have a deadline of their own, not what a protocol that ran out of
  // time left of its limit (which would fail the protocols that finished before it).
  if (sandbox_) profile::timed("done.sandbox_stop", [&] { sandbox_->stop(); });
  run_deadline_ = Clock::now() + std::chrono::seconds(60);
  // The hop of the idle device, as each draft was timed (gated or not).
  auto needs_idle = [](const Pass& p) { return p.served && p.timing && !p.timing->raw.back().empty(); };
  IdleHops idle;
  std::optional<Ending> idle_failed;
  try {
    profile::Step step("done.idle_hops");
    for (const auto& p : passes)
      if (needs_idle(p)) {
        if (p.timing->gated && idle.gated.empty()) idle.gated = idle_hop_samples(true);
        if (!p.timing->gated && idle.ungated.empty()) idle.ungated = idle_hop_samples(false);
      }
  } catch (const Ending& e) {
    idle_failed = e;
  }
  const std::vector<std::string> teardown = [&] {
    profile::Step step("done.stop_runners");
    return stop_runners();
  }();
  profile::Step finish_step("done.finish");
  for (auto& p : passes) {
    protocol_ = p.protocol;
    verdict_ = std::move(p.verdict);
    output_bytes_ = p.output_bytes;
    if (sandbox_) verdict_.isolation = sandbox_->isolation();
    verdict_.warnings.insert(verdict_.warnings.end(), teardown.begin(), teardown.end());
    if (p.served && settle([&] {
          if (idle_failed && needs_idle(p)) throw *idle_failed;
          if (p.timing) finish_timing(*p.timing, idle);
          finish_stages();
        }))
      verdict_.outcome = Outcome::correct;
    verdict_.wall_seconds = std::chrono::duration<double>(Clock::now() - p.started).count();
    out.push_back(std::move(verdict_));
  }
  return out;
}

bool Judgement::device_work_done() {
  // A runner's process that outlived its end (end_sandbox gave up on it) may still hold the device.
  if (!runners_gone_) return false;
  try {
    torch_host::synchronize(device_);  // a broken context says so here, before anything is freed
    // What the judge holds of the sandbox's memory (the outputs' allocations it mapped: they
    // outlive the sandbox while mapped) and of its own goes now, not with its exit.
    reader_.reset();
    slots_.clear();
    retired_slots_.clear();
    if (life_.python) {  // a build-only judge, or one that ended early, never started its interpreter
      compiled_.reset();
      reference_ = pybind11::object();
      hidden_ = HiddenTests{};
      pybind11::module_::import("gc").attr("collect")();
    }
    torch_host::free_cached_memory(device_);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

bool Judgement::shared_stages() {
  enter(Stage::setup);
  verdict_.problem = guarded(Outcome::problem_error, "problem file", [&] { return describe_problem(job_.problem_path, job_.size); });
  if (!job_.hidden_tests_path.empty())
    verdict_.problem.hidden_tests = guarded(Outcome::problem_error, "hidden-test file", [&] {
      return FileRef{job_.hidden_tests_path, sha256_file(job_.hidden_tests_path)};
    });
  const bool audit = job_.candidate_path.empty();
  if (!audit) {
    verdict_.candidate.sha256 = guarded(Outcome::compile_error, "candidate file", [&] {
      check_candidate_file(job_.candidate_path);
      // What the sandbox imports: its copy, hashed when it was made (start_runners).
      if (sandbox_hello_.contains("build")) return sandbox_hello_["build"].value("source_hash", std::string());
      return sha256_file(job_.candidate_path);
    });
    if (runner_start_error_) throw Ending{Outcome::internal_error, "kbv could not start the candidate's sandbox: " + *runner_start_error_};
  }
  if (job_.build_only) {
    finish_build_only();
    return false;
  }
  enter(Stage::device);
  device_ = profile::timed("shared.device", [&] { return guarded(Outcome::skipped, "device", [&] { return torch_host::resolve_device(job_.device); }); });
  verdict_.device = torch_host::describe_device(device_);
  enter_interpreter();
  verdict_.provenance.python_version = life_.python->python_version();
  verdict_.provenance.torch_version = life_.python->torch_version();
  verdict_.provenance.cuda_version = life_.python->cuda_version();
  if (device_.is_cuda()) {
    enter(Stage::tracking);
    profile::Step step("shared.tracking");
    memory_method_ = torch_host::memory_tracking_start(device_);
    torch_host::apply_expandable_segments(device_);  // asked for in main(), before CUDA started
    torch_host::watch_out_of_memory(device_);
    torch_host::forget_out_of_memory();  // an earlier evaluation's, in a judge kept warm
    torch_host::set_out_of_memory_hook([this] { note_holders_at_failure(); });
  }
  profile::timed("shared.load_problem", [&] { load_problem(); });
  if (audit) {
    audit_problem();
    enter(Stage::done);
    return false;
  }
  // The sandbox is importing the candidate now: the judge's own first-use costs go in that wait.
  // A warm judge rehearsed this problem's work for an earlier candidate: its first-use costs are paid.
  const std::string rehearsal = job_.problem_path + "\n" + job_.size + "\n" + job_.precision + "\n" + join(job_protocols(job_));
  if (rehearsal_wanted(device_) && life_.rehearsed != rehearsal) {
    profile::timed("shared.rehearsal", [&] { rehearse(); });
    life_.rehearsed = rehearsal;
  }
  profile::timed("shared.await_build", [&] { await_build(); });
  return true;
}

void Judgement::begin_protocol(const Protocol& protocol) {
  running_protocol_ = &protocol;  // before kbv hears of it: a stuck report names it from here on
  protocol_ = &protocol;
  verdict_ = shared_;
  verdict_.protocol = protocol.name;
  verdict_.protocol_version = protocol.version;
  channel_.protocol(protocol.name);
  // Each protocol has the whole run time limit, from its own start.
  started_ = Clock::now();
  run_deadline_ = started_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(job_.run_timeout_seconds));
  if (watchdog_) {
    watchdog_->arm(run_deadline_);
    // From the first protocol on (shared_ is final): the candidate's calls are under way.
    if (!device_free_build(job_))
      watchdog_->watch_ended([this] { return sandbox_->ended_status(); }, [this](int status) { end_stuck(status); });
  }
  // The previous protocol's Model and torch.compile(Model) go before the next is built.
  compiled_.reset();
  reference_ = pybind11::object();
  hidden_ = HiddenTests{};
  candidate_state_.clear();
  weights_copied_ = weights_entries_ = 0;
  output_bytes_ = 0;
  determinism_checked_ = false;
  timing_draft_.reset();
}

void Judgement::protocol_stages() {
  profile::timed("models.construct_candidate", [&] { construct_candidate(); });
  observe_custom_kernel();
  // Model is built under the backend state the first protocol's was, and that state is what every
  // baseline sample restores (not what the previous protocol's samples left).
  if (backend_state_) torch_host::restore_backend_state(*backend_state_);
  profile::timed("models.build_reference", [&] { build_reference(); });
  if (!backend_state_) backend_state_ = torch_host::capture_backend_state();
  profile::timed("models.hand_over_weights", [&] { hand_over_weights(); });
  profile::timed("correctness", [&] { check_correctness(); });
  observe_custom_kernel();
  if (strict()) profile::timed("custom_kernel", [&] { check_custom_kernel(); });
  if (device_.is_cuda() && protocol_->measure_memory && job_.measure_memory) profile::timed("memory", [&] { measure_memory(); });
  if (job_.timing.enabled) {
    if (strict_rounds_ && strict_rounds_->candidate_tf32 == protocol_tf32() &&
        strict_rounds_->result.primary_baseline == baseline_name(protocol_->baseline))
      profile::timed("timing.own_calls", [&] { take_timing_rounds(*strict_rounds_); });
    else
      profile::timed("timing", [&] { measure_time(); });
  } else if (strict()) {
    check_untimed_calls();
  }
}

// Another protocol's timing rounds as this one's own (strict's, for verified): the same candidate
// in the same sandbox under the same TF32 setting, against the same baselines, every timed call
// under strict's checks. What they warned comes along; the verdict's timing.rounds_of names
// whose rounds they are. What was the other ModelNew's alone stays behind: the device memory
// the driver showed during those rounds. And this protocol's own ModelNew still meets calls on
// fresh inputs of this protocol's kinds, every output checked, as its own timed rounds would
// have made it (a candidate can tell its second ModelNew from its first).
void Judgement::take_timing_rounds(const TimingDraft& rounds) {
  for (const auto& w : rounds.warnings) warn(w);
  check_untimed_calls();
  timing_draft_ = rounds;
}

void Judgement::finish_stages() {
  if (strict()) check_speed_bound();
  verdict_.stage = std::string(stage_name(Stage::done));
  // Strict: an integrity flag makes a numerically correct candidate incorrect.
  for (const auto& f : verdict_.flags)
    if (is_integrity_flag(f.name)) throw Ending{Outcome::incorrect, "integrity check " + f.name + ": " + f.evidence};
}

// __global__ functions and @triton.jit functions defined in a candidate's source text.
std::vector<std::string> kernel_names_in_source(const std::string& source) {
  std::set<std::string> names;
  static const std::regex cuda_kernel(
      R"(__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(?:static\s+)?void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\()");
  static const std::regex triton_kernel(R"(@triton\.jit[^\n]*\n(?:\s*@[^\n]*\n)*\s*def\s+(\w+)\s*\()");
  for (const auto* re : {&cuda_kernel, &triton_kernel})
    for (std::sregex_iterator it(source.begin(), source.end(), *re), end; it != end; ++it) names.insert((*it)[1]);
  return {names.begin(), names.end()};
}

// no_custom_kernel (informational): no library was built into the candidate's cache entry (the
// judge looks at the files itself) and its source defines no kernel: a PyTorch-only rewrite.
void Judgement::check_custom_kernel() {
  bool built = false;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(cache_.dir, ec), end; !ec && it != end; it.increment(ec))
    built = built || (it->path().extension() == ".so" && it->is_regular_file(ec) && !it->is_symlink(ec));
  std::ifstream in(job_.candidate_path);
  std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!built && kernel_names_in_source(source).empty())
    flag(FlagName::no_custom_kernel, "the candidate built no extension and defines no kernel: a PyTorch-only rewrite");
}

// implausible_speed: the candidate's median time cannot be below what writing its outputs past
// L2 takes at the device's peak bandwidth (core/speed_bound.hpp).
void Judgement::check_speed_bound() {
  if (!verdict_.timing || verdict_.timing->series.empty() || verdict_.timing->series[0].name != "candidate") return;
  if (device_.is_cuda() && verdict_.device.peak_dram_bytes_per_s <= 0)
    warn("implausible_speed not checked: the device reports no memory clock or bus width (set KBV_PEAK_DRAM_BYTES_PER_S)");
  if (auto e = implausible_speed(output_bytes_, verdict_.device.l2_bytes, verdict_.device.peak_dram_bytes_per_s,
                                 verdict_.timing->series[0].median_ms)) {
    // Other processes' kernels inflate the hops the samples are reduced by (an honest ReLU read
    // 2 us beside six other evaluations on an H100): such samples are no evidence against the
    // candidate, and no evidence for it either. Not only the floor's speedups: one below the
    // bound but above the floor would otherwise stay FASTER, and a sandbox that can pass one of
    // its own processes off as another tenant would switch the bound off at will.
    if (timed_beside_others_) {
      const bool demoted = never_faster(verdict_.timing->speedups);
      warn("implausible_speed not judged: " + *e + "; but the device was shared with other processes while it was timed" +
           (demoted ? ": its speedups are reported UNSURE, not FASTER" : ""));
    } else
      flag(FlagName::implausible_speed, *e);
  }
}

}  // namespace kbv::judge
