#include "orchestrate/run_command.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <ostream>
#include <random>
#include <sstream>
#include <thread>

#include <poll.h>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/protocol.hpp"
#include "core/version.hpp"
#include "isolation/landlock.hpp"
#include "orchestrate/built_index.hpp"
#include "orchestrate/device_turns.hpp"
#include "orchestrate/evaluation_queue.hpp"
#include "orchestrate/evaluation_run.hpp"
#include "orchestrate/host.hpp"
#include "orchestrate/option_checks.hpp"
#include "orchestrate/run_outcomes.hpp"
#include "orchestrate/run_plan.hpp"
#include "orchestrate/run_progress.hpp"
#include "orchestrate/run_throughput.hpp"
#include "orchestrate/subprocess.hpp"
#include "store/db_run_lock.hpp"
#include "store/result_store.hpp"
#include "store/verdict_spill.hpp"
#include "store/verdict_writer.hpp"

namespace fs = std::filesystem;

namespace kbv {
namespace {

// Why the run stops before its end. Set from the signal handler and from the worker threads;
// the first reason wins.
enum StopReason : int { kNotStopping = 0, kStopSignal = 1, kStopStoreFailed = 2 };
std::atomic<bool> g_stop{false};  // cancels the workers in flight (EvaluationRun::cancel)
std::atomic<int> g_stop_reason{kNotStopping};

void request_stop(StopReason why) {
  int none = kNotStopping;
  g_stop_reason.compare_exchange_strong(none, why);
  g_stop = true;
}

extern "C" void on_stop_signal(int) { request_stop(kStopSignal); }  // lock-free atomics only

// Ctrl-C, SIGTERM (a batch system's kill) and SIGHUP (a closed terminal) stop the run cleanly
// for as long as it runs; the previous handlers come back after.
class StopSignals {
 public:
  StopSignals() {
    g_stop = false;
    g_stop_reason = kNotStopping;
    for (int s : kSignals) previous_[s] = std::signal(s, on_stop_signal);
  }
  ~StopSignals() {
    for (const auto& [s, handler] : previous_) std::signal(s, handler);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  static constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
  std::map<int, void (*)(int)> previous_;
};

// The run's row says how it ended on every way out: finished, interrupted, or failed when an
// exception leaves run_command. Closing never throws: a store that cannot take it leaves the
// row `running`, and the next open marks it interrupted (its process is gone by then).
class RunRecordCloser {
 public:
  RunRecordCloser(ResultStore& store, std::int64_t run_id) : store_(store), run_id_(run_id) {}
  ~RunRecordCloser() {
    if (!closed_) close("failed");
  }
  RunRecordCloser(const RunRecordCloser&) = delete;
  RunRecordCloser& operator=(const RunRecordCloser&) = delete;

  void close(const std::string& status, const nlohmann::json& extra = nlohmann::json::object()) noexcept {
    closed_ = true;
    try {
      store_.finish_run(run_id_, status, extra);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "kbv run: could not mark run %lld %s in the DB (%s); the next kbv run marks it interrupted\n",
                   static_cast<long long>(run_id_), status.c_str(), e.what());
    }
  }

 private:
  ResultStore& store_;
  std::int64_t run_id_;
  bool closed_ = false;
};

// The device as the worker sees it (name, capability, memory): the store keys verdicts by it.
DeviceInfo probe_device(const std::string& worker, const std::string& device) {
  ProcessSpec spec;
  spec.argv = {worker, "--probe"};
  WorkerJob job;
  job.problem_path = "-";
  job.device = device;
  spec.stdin_data = nlohmann::json(job).dump();
  std::optional<DeviceInfo> info;
  auto result = run_process(spec, Clock::now() + std::chrono::seconds(120), [&](const std::string& line) {
    auto m = nlohmann::json::parse(line, nullptr, false);
    if (m.is_object() && m.value("event", "") == "device") info = device_from_json(m["device"]);
    return std::optional<Clock::time_point>{};
  });
  if (!info) {
    // A short output is all in the head (the tail keeps what follows it).
    std::string said = result.output_head + result.output_tail;
    while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
    if (said.size() > 600) said = "..." + said.substr(said.size() - 600);
    throw UsageError(fmt::format("cannot use device '{}': the judge could not open it ({}): {}{}", device, result.describe(),
                                 said,
                                 device.rfind("cuda", 0) == 0 && detect_devices().front() == "cpu"
                                     ? "\nkbv run: this machine shows no GPU: run with --device cpu (or auto), where "
                                       "CUDA candidates are recorded as skipped, or on a machine with a GPU"
                                     : ""));
  }
  return *info;
}

// Two jobs one judge can serve together: the same candidate file on the same problem (and
// hidden-test file), under different protocols.
bool same_evaluation(const RunJob& a, const RunJob& b) {
  auto hidden = [](const RunJob& j) { return j.hidden_tests ? j.hidden_tests->path : std::string(); };
  return a.candidate_sha == b.candidate_sha && a.candidate.path == b.candidate.path && a.problem.path == b.problem.path &&
         hidden(a) == hidden(b);
}

std::string job_label(const RunJob& j) {
  return fmt::format("{} L{} P{} S{} {}", j.candidate.run, j.candidate.level, j.candidate.problem_id, j.candidate.sample_id,
                     j.protocol);
}

// kbv could not run the evaluation at all (the worker would not start): kbv's fault, evaluated
// again by the next run.
Verdict internal_error_verdict(const std::string& what) {
  Verdict v;
  v.outcome = Outcome::internal_error;
  v.stage = "start";
  v.reason = "kbv could not run the evaluation (" + what + "); kbv's fault, not the candidate's: the next kbv run evaluates it again";
  return v;
}

void print_scan_notes(const RunScan& scan, const RunPlan* plan, std::ostream& out) {
  for (const auto& s : scan.skipped) out << fmt::format("kbv run: skipped {}: {}\n", s.path, s.why);
  for (const auto& d : scan.duplicates) {
    std::string files;
    for (const auto& p : d.paths) files += " " + p;
    out << fmt::format("kbv run: note: level {} problem {} has more than one file ({}); no candidate needs it here, but "
                       "rename or remove all but one before one does\n",
                       d.level, d.id, files.substr(1));
  }
  for (const auto& c : scan.unmatched)
    out << fmt::format("kbv run: no problem level {} id {} for {}; skipped\n", c.level, c.problem_id, c.path);
  if (plan)
    for (const auto& u : plan->unreadable) out << fmt::format("kbv run: skipped {}: cannot read it ({})\n", u.path, u.why);
}

// How many of the run's problems --hidden-tests found a file for: a folder of another layout
// (or level) would otherwise add nothing without a word.
void print_hidden_tests_note(const RunPlan& plan, const std::string& dir, std::ostream& out) {
  if (dir.empty()) return;
  std::set<std::string> problems, with_file;
  for (const auto& j : plan.jobs) {
    problems.insert(j.problem.path);
    if (j.hidden_tests) with_file.insert(j.problem.path);
  }
  out << fmt::format("kbv run: hidden tests: {} of {} problem(s) have a file in {} (level<L>/<id>_hidden.py){}\n",
                     with_file.size(), problems.size(), dir,
                     with_file.size() < problems.size() ? "; the others are checked on the protocol's distributions alone" : "");
}

// Below this many sources to build, the PCH (~40 s of CPU and 750 MB a variant, once per build
// root) costs more than it saves (~17 s a source). `auto` makes it for GPU runs only: on the CPU
// path extensions are C++-only and rare.
constexpr std::size_t kTorchPchMinSources = 4;
// Judges started ahead per GPU by default: one start-up (~3.5 s: two interpreters importing
// torch) is about one evaluation's turn, so two keep the next judge ready (bench/RESULTS.md).
constexpr int kDefaultPrestart = 2;
// How much nicer builds run beside the evaluation (--overlap-builds): the judge, its sandbox and
// its twin get a core first whenever they want one.
constexpr int kOverlapBuildNice = 10;

// KBV_SANDBOX_LANDLOCK=0 (the judge's switch, docs/architecture.md): sandboxes without Landlock.
bool landlock_off() {
  const char* v = std::getenv("KBV_SANDBOX_LANDLOCK");
  return v && std::string(v) == "0";
}

// Waits until `turn` is the device's (its gate readable), or `stop`. False: stopped.
bool wait_for_gate(const DeviceTurns::Turn& turn, const std::atomic<bool>& stop) {
  while (!stop) {
    pollfd p{turn.gate_fd(), POLLIN, 0};
    if (::poll(&p, 1, 100) == 1) return true;
  }
  return false;
}

// How many of the sources to build mention torch's extension builder (load_inline / load): the
// only ones the PCH can speed up.
template <typename Jobs, typename Todo>
std::size_t builds_extensions(const std::vector<std::string>& sources, const Jobs& by_source, const Todo& todo) {
  std::size_t n = 0;
  for (const auto& sha : sources) {
    std::ifstream in(todo[by_source.at(sha).front()].candidate.path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.find("cpp_extension") != std::string::npos) ++n;
  }
  return n;
}

// Build jobs from which the PCH is made beside the builds rather than before them.
constexpr int kPchBesideBuildsMinJobs = 8;

// The judge precompiles torch/extension.h into the build root for the builds (it never runs
// candidate code: the sandboxes only read the result). A failure costs speed, not verdicts.
void prepare_torch_pch(const std::string& judge, const std::string& build_root, bool quiet, int nice, std::ostream& out) {
  ProcessSpec spec;
  spec.argv = {judge, "--make-torch-pch", build_root};
  spec.cancel = &g_stop;
  spec.nice = nice;  // beside the evaluation, as the builds
  spec.env_set["CUDA_VISIBLE_DEVICES"] = "";  // a compiler's work: never a tenant of the GPU
  ProcessResult r;
  try {
    r = run_process(spec, Clock::now() + std::chrono::minutes(15));
  } catch (const std::exception& e) {
    out << "kbv run: warning: could not start the judge to precompile torch/extension.h: " << e.what() << "\n";
    return;
  }
  std::string tail = r.output_tail.empty() ? r.output_head : r.output_tail;
  while (!tail.empty() && tail.back() == '\n') tail.pop_back();
  if (!r.exited || r.exit_code != 0)
    out << "kbv run: warning: precompiling torch/extension.h failed (" << r.describe() << "); builds parse it as before: "
        << tail.substr(tail.size() > 600 ? tail.size() - 600 : 0) << "\n";
  else if (!quiet)
    out << fmt::format("kbv run: torch/extension.h precompiled for the builds ({:.1f} s): {}\n", r.wall_seconds,
                       tail.substr(tail.rfind('\n') == std::string::npos ? 0 : tail.rfind('\n') + 1));
}


// What the plan phase settles before any work: the checked options, the devices, the
// conditions every verdict records, and whether builds run beside the evaluation.
struct RunSetup {
  RunOptions o;
  std::string build_root;
  std::string worker;
  RunScan scan;
  std::vector<std::string> devices;
  bool cpu = false;
  int prestart = 0;
  bool overlap_builds = false;
  RunConditions conditions;
};

// Plan, first part: options, build root, worker, scan, devices and the run's conditions.
RunSetup setup_run(const RunOptions& options, std::ostream& out) {
  RunSetup s;
  s.o = options;
  RunOptions& o = s.o;
  check_run_options(o, out);
  s.build_root = fs::absolute(o.build_dir.empty() ? default_cache_dir() + "/builds" : o.build_dir).string();
  if (!o.list) check_folder_writable("--build-dir", s.build_root);  // else every candidate would fail on it
  s.worker = find_worker_executable();
  s.scan = scan_run(o.problems_dir, o.runs_dir, o.filter);

  s.devices = o.devices.empty() ? detect_devices() : o.devices;
  s.cpu = s.devices.front() == "cpu";
  const bool cpu = s.cpu;
  s.prestart = o.prestart >= 0 ? o.prestart : (cpu ? 0 : kDefaultPrestart);
  RunConditions& conditions = s.conditions;
  conditions.precision = o.precision;
  conditions.size = o.size == "auto" ? (cpu ? "small" : "default") : o.size;
  conditions.limits = {o.compile_timeout, o.run_timeout};
  conditions.hidden_tests_dir = o.hidden_tests_dir;
  conditions.torch_compile = o.torch_compile;
  if (cpu && !o.quiet) out << "kbv run: no GPU found; running the CPU path (small sizes, CPU timing, no device memory)\n";
  // Builds beside the evaluation must not reach its GPU: Landlock with device ioctls (ABI 5) seals
  // the device files from a build's sandbox (docs/scale.md). On the CPU the timing needs the cores.
  bool overlap_builds = o.overlap_builds.value_or(true);
  const bool overlap_asked = o.overlap_builds.value_or(false);
  if (overlap_builds && cpu) {
    overlap_builds = false;
    if (overlap_asked && !o.quiet)
      out << "kbv run: note: --overlap-builds is off on the CPU: its timing needs the cores the builds would take\n";
  } else if (overlap_builds && (isolation::landlock_abi() < 5 || landlock_off())) {
    overlap_builds = false;
    if (!o.quiet)
      out << "kbv run: note: --overlap-builds is off (builds first): this kernel's Landlock (ABI " << isolation::landlock_abi()
          << ", 5 needed) cannot keep a build's sandbox off the GPU being timed\n";
  }
  s.overlap_builds = overlap_builds;
  if (cpu && s.prestart > 0 && !o.quiet)
    out << "kbv run: note: --prestart on the CPU: judges starting ahead share the cores with the CPU timing of the "
           "evaluation before them\n";
  conditions.device = probe_device(s.worker, s.devices.front());
  return s;
}

// --list: reads the DB if there is one; writes nothing.
int print_run_list(const RunSetup& s, std::ostream& out) {
  const RunOptions& o = s.o;
  refuse_if_not_sqlite(o.db_path);
  std::optional<ResultStore> stored;
  if (fs::exists(o.db_path)) stored.emplace(o.db_path, ResultStore::Mode::read_only);
  RunPlan plan = plan_run(s.scan, o.protocols, s.conditions, stored ? &*stored : nullptr);
  print_scan_notes(s.scan, &plan, out);
  print_hidden_tests_note(plan, o.hidden_tests_dir, out);
  print_plan(plan, out);
  return 0;
}

// Verdicts an earlier run kept in a spill file when its DB failed go into the DB first.
void import_spilled_verdicts(ResultStore& store, const std::string& db_path, std::ostream& out) {
  SpillImport imported = import_spills(store, db_path, spill_fallback_dir());
  for (const auto& f : imported.files)
    out << fmt::format("kbv run: imported verdicts kept from an earlier run's store failure: {}\n", f);
  if (imported.imported || imported.unreadable_lines)
    out << fmt::format("kbv run: {} verdict(s) imported into {}{}\n", imported.imported, db_path,
                       imported.unreadable_lines
                           ? fmt::format("; {} unreadable line(s) kept in <spill>.bad", imported.unreadable_lines)
                           : "");
}

// The run's row in the store: provenance and the options that shape its verdicts.
RunRecord run_record(const RunSetup& s, const std::vector<std::string>& argv) {
  const RunOptions& o = s.o;
  RunRecord record;
  record.argv = argv;
  record.kbv_version = kVersion;
  record.git_commit = kGitCommit;
  record.device_fingerprint = device_fingerprint(s.conditions.device);
  record.device_name = s.conditions.device.name;
  record.protocol = o.protocols.size() == 1 ? o.protocols.front() : "several";
  record.precision = o.precision;
  record.options = {{"problems", o.problems_dir},
                    {"runs", o.runs_dir},
                    {"protocols", o.protocols},
                    {"size", s.conditions.size},
                    {"devices", s.devices},
                    {"time_budget", o.time_budget},
                    {"prestart", s.prestart},
                    {"sandbox_per_protocol", o.sandbox_per_protocol},
                    {"overlap_builds", s.overlap_builds},
                    {"compile_timeout", o.compile_timeout},
                    {"run_timeout", o.run_timeout},
                    {"torch_compile", o.torch_compile}};
  if (!o.hidden_tests_dir.empty()) record.options["hidden_tests"] = fs::absolute(o.hidden_tests_dir).string();
  // Provenance of a shard's DB once merged (kbv merge): which part of the work this run was.
  if (o.filter.shard) record.options["shard"] = o.filter.shard->text();
  return record;
}

// Plan, second part: the jobs the store does not already settle, and a line saying so.
std::vector<RunJob> plan_todo(const RunSetup& s, ResultStore& store, std::ostream& out) {
  const RunOptions& o = s.o;
  RunPlan plan = plan_run(s.scan, o.protocols, s.conditions, &store);
  print_scan_notes(s.scan, &plan, out);
  if (!o.quiet) print_hidden_tests_note(plan, o.hidden_tests_dir, out);
  const std::string will_skip_note = describe_will_skip(plan);  // before the jobs move out of the plan
  std::vector<RunJob> todo;
  for (auto& j : plan.jobs)
    if (j.choice.evaluate) todo.push_back(std::move(j));
  const std::size_t already = plan.jobs.size() - todo.size();
  std::size_t again = 0;
  for (const auto& j : todo) again += j.stored.has_value();
  if (!o.quiet && o.filter.shard)
    out << fmt::format("kbv run: shard {}: the candidates whose key hashes to it (docs/scale.md)\n", o.filter.shard->text());
  if (!o.quiet)
    out << fmt::format("kbv run: {} candidates x {} protocol(s): {} to evaluate{}, {} already in {}\n", s.scan.matched.size(),
                       o.protocols.size(), todo.size(),
                       again ? fmt::format(" ({} again: stored, but not the candidate's result; --list says why)", again)
                             : "",
                       already, o.db_path);
  out << will_skip_note;  // even with --quiet: it is what the run's verdicts will say
  return todo;
}

// A worker that cannot even start is kbv's fault, not the job's: an internal_error verdict.
Verdict evaluate_run(const EvaluationRun& run) {
  try {
    return run_evaluation(run);
  } catch (const std::exception& e) {
    return internal_error_verdict(e.what());
  }
}

// A verdict that ends as `crashed` or `internal_error` (a judge that ended without a verdict)
// after a stop was requested is the stop's doing (the worker was killed): not a verdict, the
// re-run evaluates it (as it would any internal_error).
bool cancelled(const Verdict& v) { return g_stop && (v.outcome == Outcome::crashed || v.outcome == Outcome::internal_error); }

// The work of the run once planned: the builds (phase 1) and the device turns (phase 2), the
// verdicts kept as they come, and where the time went.
class RunPhases {
 public:
  RunPhases(const RunSetup& s, const std::vector<std::string>& argv, std::vector<RunJob> todo,
            const std::string& device_fingerprint, VerdictWriter& writer, std::int64_t run_id, std::ostream& out);

  // Builds, and the evaluation after them or beside them (--overlap-builds).
  void run();

  bool empty() const { return todo_.empty(); }
  std::size_t lost() const { return lost_; }
  const RunThroughput& throughput() const { return throughput_; }
  const RunOutcomes& outcomes() const { return outcomes_; }

 private:
  EvaluationRun make_run(const RunJob& job, const std::string& dev) const;
  void keep(const RunJob& job, Verdict v);
  std::optional<Verdict> build_source(const std::string& sha, bool with_gpu);
  void settle_build(const std::string& sha, const Verdict& v);
  void build_all(const std::vector<std::string>& list, bool with_gpu);
  void run_builds();
  void evaluate_on(std::size_t d);
  std::vector<std::thread> start_evaluators();
  static double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  }

  const RunSetup& s_;
  const RunOptions& o_;
  const std::vector<std::string>& argv_;
  std::vector<RunJob> todo_;
  VerdictWriter& writer_;
  const std::int64_t run_id_;
  std::ostream& out_;
  std::mutex lost_mutex_;
  std::size_t lost_ = 0;
  RunOutcomes outcomes_;  // what this run judged, said at its end

  std::map<std::string, std::vector<std::size_t>> by_source_;  // candidate sha -> jobs
  BuiltIndex built_index_;
  std::vector<std::string> sources_;
  std::size_t cached_sources_ = 0;
  bool overlap_ = false;
  std::optional<RunProgress> progress_;
  RunThroughput throughput_;
  std::mutex throughput_mutex_;
  std::chrono::steady_clock::time_point run_start_;
  int build_threads_ = 1;
  std::optional<EvaluationQueue> queue_;
  std::vector<std::unique_ptr<DeviceTurns>> turns_;
  bool use_turns_ = false;
  std::mutex retry_mutex_;
  std::vector<std::string> needs_device_;  // sources for the second round
};

RunPhases::RunPhases(const RunSetup& s, const std::vector<std::string>& argv, std::vector<RunJob> todo,
                     const std::string& device_fingerprint, VerdictWriter& writer, std::int64_t run_id, std::ostream& out)
    : s_(s),
      o_(s.o),
      argv_(argv),
      todo_(std::move(todo)),
      writer_(writer),
      run_id_(run_id),
      out_(out),
      built_index_(s.build_root, device_fingerprint) {
  // Phase 1: build each distinct candidate once, in parallel. A failed build is the verdict
  // for every protocol of that candidate; the rest go on to evaluation with a warm cache.
  // With --overlap-builds the evaluation starts at once and takes each candidate as its build
  // ends; the builds then see no GPU (docs/scale.md, "Builds beside the evaluation").
  for (std::size_t i = 0; i < todo_.size(); ++i) by_source_[todo_[i].candidate_sha].push_back(i);
  // Sources this cache already holds for this device and kbv need no build-only worker.
  for (const auto& [sha, jobs] : by_source_) {
    if (built_index_.built_dir(sha)) ++cached_sources_;
    else sources_.push_back(sha);
  }
  overlap_ = s.overlap_builds && !sources_.empty();
  progress_.emplace(sources_.size(), todo_.size(), o_.quiet);
  throughput_.overlapped = overlap_;
  run_start_ = std::chrono::steady_clock::now();
  // Overlapping, the builds leave cores to the evaluation (its judge, sandbox and twin) and yield
  // to it besides (niced).
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  build_threads_ =
      o_.jobs > 0 ? o_.jobs : overlap_ ? std::max(1, cores - 2 * static_cast<int>(s.devices.size())) : cores;

  // Every job's evaluation, grouped by candidate (strict first: its memory figures then see a
  // sandbox nothing else ran in); candidates still to build are held back until they are.
  std::vector<std::size_t> eval_jobs(todo_.size());
  std::vector<std::string> candidate_of(todo_.size());
  for (std::size_t j = 0; j < todo_.size(); ++j) {
    eval_jobs[j] = j;
    candidate_of[j] = todo_[j].candidate_sha;
  }
  auto serve_rank = [&](std::size_t j) { return todo_[j].protocol == "strict" ? 0 : todo_[j].protocol == "verified" ? 1 : 2; };
  // Groups keep the order of their candidates' first jobs; within one, this order.
  std::stable_sort(eval_jobs.begin(), eval_jobs.end(), [&](std::size_t a, std::size_t b) { return serve_rank(a) < serve_rank(b); });
  queue_.emplace(eval_jobs, candidate_of, std::set<std::string>(sources_.begin(), sources_.end()));
  for (std::size_t d = 0; d < s.devices.size(); ++d) turns_.push_back(std::make_unique<DeviceTurns>());
  // Turns order the device's evaluations when judges start ahead, and keep a build that needs
  // the GPU off it while it evaluates (overlapping).
  use_turns_ = s.prestart > 0 || overlap_;
}

EvaluationRun RunPhases::make_run(const RunJob& job, const std::string& dev) const {
  EvaluationRun run;
  run.worker_path = s_.worker;
  run.argv = argv_;
  run.cancel = &g_stop;
  run.device = s_.conditions.device;
  run.limits = {o_.compile_timeout, o_.run_timeout};
  run.job.problem_path = fs::absolute(job.problem.path).string();
  run.job.candidate_path = fs::absolute(job.candidate.path).string();
  run.job.protocol = job.protocol;
  run.job.precision = o_.precision;
  run.job.device = dev;
  run.job.size = s_.conditions.size;
  run.job.build_root = s_.build_root;
  run.job.batch_folders = s_.scan.batch_folders;
  run.job.secret = std::random_device{}() ^ (static_cast<std::uint64_t>(std::random_device{}()) << 32);
  run.job.timing.budget_seconds = o_.time_budget;
  run.job.timing.torch_compile = o_.torch_compile;
  run.job.hidden_tests_path = job.hidden_tests ? job.hidden_tests->path : "";
  run.job.sandbox_memory_bytes = static_cast<std::int64_t>(o_.sandbox_memory_gib * (1LL << 30));
  return run;
}

// Every finished verdict is kept: in the DB, else in the spill file (and the run stops), else
// as a line on stderr, the last place left.
void RunPhases::keep(const RunJob& job, Verdict v) {
  complete_identity(v, job, s_.conditions);
  v.limits = s_.conditions.limits;
  outcomes_.add(v);  // thread-safe
  try {
    if (writer_.put(sample_of(job), v, run_id_) == VerdictWriter::Where::spill) request_stop(kStopStoreFailed);
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(lost_mutex_);
    ++lost_;
    std::cerr << "kbv run: neither the DB nor a spill file could take the verdict of " << job_label(job) << " (" << e.what()
              << "); here it is:\n"
              << verdict_to_json_text(v) << "\n";
    request_stop(kStopStoreFailed);
  }
}

// One build-only worker per source. Overlapping on a GPU, it builds for the device's
// architecture without the device (device-free), in the background (idle class, niced). A
// candidate whose import may need the GPU (stage needs_device) waits for a second round: all
// of them at once, with the GPU, while kbv holds a turn of every device (never beside an
// evaluation, and one wait of the devices for them all).
std::optional<Verdict> RunPhases::build_source(const std::string& sha, bool with_gpu) {
  const auto& jobs = by_source_.at(sha);  // read-only from the builder threads
  EvaluationRun run = make_run(todo_[jobs.front()], s_.devices.front());
  run.job.build_only = true;
  double cpu_seconds = 0;
  run.cpu_seconds = &cpu_seconds;
  if (overlap_ && !with_gpu) {
    run.nice = kOverlapBuildNice;
    run.background = true;
    run.job.build_cuda_arch = s_.conditions.device.capability;
  }
  Verdict v = evaluate_run(run);
  if (cancelled(v)) return std::nullopt;
  std::lock_guard<std::mutex> lock(throughput_mutex_);
  // A source built twice (device-free, then with the GPU) counts once, its time twice.
  throughput_.add_build(v, cpu_seconds, /*new_source=*/!with_gpu);
  return v;
}

// The verdict of a source's build: its candidate goes on to evaluation, or its build failure
// is every protocol's verdict.
void RunPhases::settle_build(const std::string& sha, const Verdict& v) {
  const auto& jobs = by_source_.at(sha);
  bool built = v.outcome == Outcome::skipped && v.stage == "built";
  if (built && v.build && !v.build->build_dir.empty()) built_index_.mark_built(sha, v.build->build_dir);
  if (built) {
    queue_->ready(sha);
  } else {
    for (std::size_t j : jobs) {
      Verdict copy = v;
      copy.protocol = todo_[j].protocol;
      copy.protocol_version = protocol_by_name(todo_[j].protocol).version;
      keep(todo_[j], copy);
      progress_->evaluated(job_label(todo_[j]) + ": " + std::string(outcome_name(v.outcome)));
    }
    queue_->dropped(sha);
  }
  progress_->built(todo_[jobs.front()].candidate.path);
}

// `list` built by build_threads workers; with_gpu: the second round.
void RunPhases::build_all(const std::vector<std::string>& list, bool with_gpu) {
  std::atomic<std::size_t> next_build{0};
  std::vector<std::thread> builders;
  for (int t = 0; t < build_threads_; ++t) {
    builders.emplace_back([&] {
      for (std::size_t s; !g_stop && (s = next_build++) < list.size();) {
        std::optional<Verdict> v = build_source(list[s], with_gpu);
        if (!v) return;  // stopped
        if (!with_gpu && v->outcome == Outcome::skipped && v->stage == "needs_device") {
          std::lock_guard<std::mutex> lock(retry_mutex_);
          needs_device_.push_back(list[s]);
          continue;
        }
        settle_build(list[s], *v);
      }
    });
  }
  for (auto& t : builders) t.join();
}

void RunPhases::run_builds() {
  std::ostream& out = out_;
  // With cores to spare the headers are precompiled beside the first builds, not before them
  // (six compiles: torch/extension.h and kbv/binding.h at three -O levels): a build that starts
  // first parses the header itself (its flags are the same either way, and the PCH appears by a
  // rename), and the other cores build meanwhile. With few, the builds wait for it: each then saves ~17 s of CPU.
  std::ostringstream pch_note;  // printed once it is done: the progress line owns `out` meanwhile
  std::jthread pch;             // joined on every way out, a throw included
  auto finish_pch = [&] {
    if (!pch.joinable()) return;
    pch.join();
    out << pch_note.str() << std::flush;
  };
  if (!sources_.empty() && !g_stop &&
      (o_.torch_pch == "on" ||
       (o_.torch_pch == "auto" && !s_.cpu && builds_extensions(sources_, by_source_, todo_) >= kTorchPchMinSources))) {
    pch = std::jthread([&] { prepare_torch_pch(s_.worker, s_.build_root, o_.quiet, overlap_ ? kOverlapBuildNice : 0, pch_note); });
    if (build_threads_ < kPchBesideBuildsMinJobs) finish_pch();
  }
  build_all(sources_, false);
  finish_pch();
  if (!needs_device_.empty() && !g_stop) {
    if (!o_.quiet)
      out << fmt::format("kbv run: {} candidate(s) whose import may need the GPU: building them with it, the devices "
                         "waiting\n",
                         needs_device_.size())
          << std::flush;
    // One thread takes every device's turn, in device order (evaluators take one turn each,
    // so this cannot deadlock); the turns end when the round does.
    std::vector<DeviceTurns::Turn> held;
    bool have_turns = true;
    try {
      for (auto& t : turns_) held.push_back(t->take());
    } catch (const std::exception& e) {
      have_turns = false;
      for (const auto& sha : needs_device_)
        settle_build(sha, internal_error_verdict(std::string("kbv could not take a turn of the devices for a build: ") + e.what()));
    }
    bool open = have_turns;
    for (const auto& turn : held) open = open && wait_for_gate(turn, g_stop);
    if (open) build_all(needs_device_, true);
  }
  queue_->close();  // a stop leaves candidates unbuilt: they are not evaluated
  const bool stopped = g_stop.load();
  throughput_.build_jobs = build_threads_;
  throughput_.builds_cached = cached_sources_;
  throughput_.build_phase_seconds = seconds_since(run_start_);
  if (!o_.quiet && !by_source_.empty()) {
    if (stopped)
      out << fmt::format("kbv run: build phase stopped after {} of {} candidate sources ({:.1f} s wall)\n", throughput_.builds,
                         sources_.size(), throughput_.build_phase_seconds);
    else
      out << fmt::format("kbv run: build phase done: {} candidate sources built in {:.1f} s wall, {} at a time ({:.1f} s of "
                         "worker time); {} already in the build cache{}\n",
                         throughput_.builds, throughput_.build_phase_seconds, build_threads_, throughput_.build_worker_seconds,
                         cached_sources_, overlap_ ? "; the evaluation ran beside it" : "");
    out << std::flush;
  }
}

// Phase 2: evaluate, one judge at a time per device, each serving all protocols of one
// candidate with one sandbox. A judge that stops early leaves the rest to the next judge on
// the same device. With --prestart N, N more judges per device start ahead and wait for their
// turn.
void RunPhases::evaluate_on(std::size_t d) {
  std::optional<std::vector<std::size_t>> group;
  while (!g_stop && (group = queue_->next_group(&g_stop))) {
    for (std::vector<std::size_t> left = *group; !left.empty() && !g_stop;) {
      // One judge: the protocols of the first job's evaluation (its problem, its file; one
      // source may be the candidate of several problems or samples), each once.
      std::vector<std::size_t> batch;
      for (std::size_t j : left)
        if (same_evaluation(todo_[j], todo_[left.front()]) &&
            std::none_of(batch.begin(), batch.end(), [&](std::size_t b) { return todo_[b].protocol == todo_[j].protocol; }))
          batch.push_back(j);
      if (o_.sandbox_per_protocol) batch.resize(1);
      EvaluationRun run = make_run(todo_[batch.front()], s_.devices[d]);
      if (batch.size() > 1)
        for (std::size_t j : batch) run.job.protocols.push_back(todo_[j].protocol);
      std::optional<DeviceTurns::Turn> turn;
      std::vector<Verdict> verdicts;
      try {  // as evaluate_run(), with taking a turn (a pipe) among what may fail
        if (use_turns_) {
          turn.emplace(turns_[d]->take());
          run.on_released = [&turn] { turn->end(); };
          if (s_.prestart > 0) {
            run.device_gate_fd = turn->gate_fd();
            run.turns_ahead = s_.prestart;
            run.gate_opened_at = [&turn] { return turn->opened_at(); };
          } else if (!wait_for_gate(*turn, g_stop)) {
            return;  // stopped while a build had the device
          }
        }
        verdicts = run_evaluations(run);
      } catch (const std::exception& e) {
        verdicts = {internal_error_verdict(e.what())};
        verdicts.front().protocol = todo_[left.front()].protocol;
      }
      if (turn) turn->end();  // the judge has exited (or said the device was free): the next one may have it
      bool stopped = false;
      const std::size_t before = left.size();
      // A judge always settles the protocol it was in; should one name none asked, the
      // first is settled by that failure, so the loop always moves on.
      if (std::none_of(verdicts.begin(), verdicts.end(), [&](const Verdict& v) {
            return std::any_of(batch.begin(), batch.end(), [&](std::size_t j) { return todo_[j].protocol == v.protocol; });
          })) {
        verdicts = {internal_error_verdict("kbv-judge sent no verdict for the protocols it was asked for")};
        verdicts.front().protocol = todo_[batch.front()].protocol;
      }
      for (auto& v : verdicts) {
        auto it = std::find_if(batch.begin(), batch.end(), [&](std::size_t j) { return todo_[j].protocol == v.protocol; });
        if (it == batch.end()) continue;
        const std::size_t j = *it;
        batch.erase(it);
        left.erase(std::find(left.begin(), left.end(), j));
        if (cancelled(v)) {
          stopped = true;
          continue;
        }
        keep(todo_[j], v);
        {
          std::lock_guard<std::mutex> lock(throughput_mutex_);
          throughput_.add_evaluation(v);
        }
        progress_->evaluated(job_label(todo_[j]) + ": " + std::string(outcome_name(v.outcome)));
      }
      if (stopped || left.size() == before) return;
    }
  }
}

std::vector<std::thread> RunPhases::start_evaluators() {
  std::vector<std::thread> evaluators;
  for (std::size_t d = 0; d < s_.devices.size(); ++d)
    for (int k = 0; k <= s_.prestart; ++k) evaluators.emplace_back(&RunPhases::evaluate_on, this, d);
  return evaluators;
}

void RunPhases::run() {
  std::vector<std::thread> evaluators;
  if (overlap_) evaluators = start_evaluators();
  try {
    run_builds();
  } catch (...) {
    queue_->close();  // the evaluators beside the builds finish what is ready, then return
    for (auto& t : evaluators) t.join();
    throw;
  }
  const auto phase_start = overlap_ ? run_start_ : std::chrono::steady_clock::now();
  if (!overlap_) evaluators = start_evaluators();
  for (auto& t : evaluators) t.join();
  throughput_.eval_phase_seconds = seconds_since(phase_start);
  progress_->finish();
}

// Summary: the run's row closed with how it ended, and what to do next.
int finish_run(const RunOptions& o, const RunPhases& phases, RunRecordCloser& closer, const VerdictSpill& spill,
               const VerdictWriter& writer, ResultStore& store, std::ostream& out) {
  const nlohmann::json extra = {{"throughput", phases.throughput().to_json()}};
  if (g_stop_reason == kStopStoreFailed) {
    closer.close("failed", extra);
    std::string files;
    for (const auto& f : spill.files()) files += (files.empty() ? "" : ", ") + f;
    out << fmt::format("kbv run: stopped: the results DB {} failed: {}\n", o.db_path, writer.db_error());
    if (spill.count())
      out << fmt::format("kbv run: {} finished verdict(s) the DB did not take are kept in {}; fix the cause (free disk space, "
                         "end the process that holds the DB) and run the same command again: it imports them and "
                         "resumes\n",
                         spill.count(), files);
    if (phases.lost())
      out << fmt::format("kbv run: {} verdict(s) could be kept nowhere; each was printed on stderr as JSON\n", phases.lost());
    return kExitStoreFailed;
  }
  if (g_stop_reason == kStopSignal) {
    closer.close("interrupted", extra);
    out << "kbv run: interrupted; verdicts so far are in " << o.db_path << "; run the same command again to resume\n";
    return kExitInterrupted;
  }
  closer.close("finished", extra);
  // Said even with --quiet: a run that judged little or nothing must not read as success.
  phases.outcomes().describe(out);
  if (phases.outcomes().all_internal_errors()) {
    out << fmt::format("kbv run: failed: every evaluation of this run was an internal_error (see above); fix the cause "
                       "and run the same command again\n");
    return kExitAllInternalErrors;
  }
  if (!o.quiet) {
    if (!phases.empty()) out << "kbv run: where the time went\n" << phases.throughput().describe();
    std::int64_t count = -1;
    try {
      count = store.verdict_count();
    } catch (const StoreError&) {
    }
    out << fmt::format("kbv run: done; {} verdicts in {} (kbv report --db {})\n", count, o.db_path, o.db_path);
  }
  return 0;
}

}  // namespace

std::string spill_fallback_dir() { return default_cache_dir() + "/spill"; }

void check_run_options(RunOptions& o, std::ostream& out) {
  if (o.protocols.empty()) throw UsageError("--protocol needs at least one of standard, verified, strict");
  std::vector<std::string> unique;
  for (const auto& p : o.protocols) {
    protocol_by_name(p);  // validates
    if (std::find(unique.begin(), unique.end(), p) == unique.end()) unique.push_back(p);
    else out << fmt::format("kbv run: note: --protocol {} given more than once; evaluating it once\n", p);
  }
  o.protocols = unique;
  precision_from_name(o.precision);
  check_positive("--compile-timeout", o.compile_timeout);
  check_positive("--run-timeout", o.run_timeout);
  check_positive("--time-budget", o.time_budget);
  check_positive("--store-wait", o.store_wait);
  if (o.jobs < 0) throw UsageError(fmt::format("--jobs {} must be at least 1", o.jobs));
  if (o.prestart < -1 || o.prestart > 8) throw UsageError(fmt::format("--prestart {}: write 0 to 8 (judges started ahead per device)", o.prestart));
  if (o.size != "auto" && o.size != "default" && o.size != "small")
    throw UsageError("--size '" + o.size + "': write default, small or auto");
  if (!o.hidden_tests_dir.empty() && !fs::is_directory(o.hidden_tests_dir))
    throw UsageError(fmt::format("--hidden-tests '{}' is not a folder (KernelBench-Verified's hidden_tests: level1/<id>_hidden.py ...)",
                                 o.hidden_tests_dir));
  fs::path db_dir = fs::absolute(o.db_path).parent_path();
  if (!fs::is_directory(db_dir))
    throw UsageError(fmt::format("--db '{}': folder '{}' does not exist; create it or pass another path", o.db_path,
                                 db_dir.string()));
}

int run_command(const RunOptions& options, const std::vector<std::string>& argv, std::ostream& out) {
  // Plan: options, devices and conditions; --list stops there.
  const RunSetup s = setup_run(options, out);
  const RunOptions& o = s.o;
  if (o.list) return print_run_list(s, out);

  refuse_if_not_sqlite(o.db_path);  // before the lock: a refused DB leaves no <db>.lock beside it
  std::optional<DbRunLock> lock;
  try {
    lock.emplace(o.db_path);
  } catch (const DbBusyError& e) {
    std::cerr << "kbv run: " << e.what() << "\n";
    return kExitDbBusy;
  }
  const int busy_ms = static_cast<int>(std::min<double>(kDefaultBusyTimeoutMs, o.store_wait * 1000));
  ResultStore store(o.db_path, ResultStore::Mode::read_write, busy_ms);
  import_spilled_verdicts(store, o.db_path, out);

  StopSignals stop_signals;  // from here on a signal ends the run through the code below
  const RunRecord record = run_record(s, argv);
  const std::int64_t run_id = store.begin_run(record);
  RunRecordCloser closer(store, run_id);
  std::vector<RunJob> todo = plan_todo(s, store, out);

  // Builds and device turns, every verdict kept as it comes.
  VerdictSpill spill(o.db_path, spill_fallback_dir());
  VerdictWriter writer(store, spill, WriteRetry{o.store_wait}, &g_stop);
  RunPhases phases(s, argv, std::move(todo), record.device_fingerprint, writer, run_id, out);
  phases.run();

  return finish_run(o, phases, closer, spill, writer, store, out);
}

}  // namespace kbv
