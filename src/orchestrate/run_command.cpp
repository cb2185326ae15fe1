#include "orchestrate/run_command.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <ostream>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/protocol.hpp"
#include "core/sha256.hpp"
#include "core/version.hpp"
#include "orchestrate/built_index.hpp"
#include "orchestrate/evaluation_run.hpp"
#include "orchestrate/host.hpp"
#include "orchestrate/run_scan.hpp"
#include "orchestrate/run_throughput.hpp"
#include "orchestrate/subprocess.hpp"
#include "store/result_store.hpp"

namespace fs = std::filesystem;

namespace kbv {
namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void on_interrupt(int) { g_interrupted = true; }

// One evaluation to do: a candidate, its problem, a protocol.
struct Job {
  CandidateFile candidate;
  ProblemFile problem;
  std::string protocol;
  std::string candidate_sha;
  std::string problem_sha;
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
  if (!info)
    throw UsageError("cannot use device '" + device + "': kbv-worker --probe " + result.describe() + ": " +
                     result.output_tail.substr(0, 500));
  return *info;
}

// Progress on stderr: one rewritten line on a terminal, a line per finished job otherwise.
class Progress {
 public:
  Progress(std::size_t builds, std::size_t evals, bool quiet)
      : builds_(builds), evals_(evals), quiet_(quiet), tty_(::isatty(2)), start_(std::chrono::steady_clock::now()) {}

  void built(const std::string& what) { update(++built_, done_, what); }
  void evaluated(const std::string& what) { update(built_, ++done_, what); }
  void finish() {
    if (tty_ && !quiet_) std::fputs("\n", stderr);
  }

 private:
  void update(std::size_t built, std::size_t done, const std::string& what) {
    if (quiet_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::string eta = "-";
    if (done > 0 && evals_ > done) {
      double left = elapsed / static_cast<double>(done) * static_cast<double>(evals_ - done);
      eta = fmt::format("{}m{:02}s", static_cast<int>(left) / 60, static_cast<int>(left) % 60);
    }
    std::string line = fmt::format("[build {}/{}] [eval {}/{}] {:.1f} eval/min, ETA {}  {}", built, builds_, done, evals_,
                                   elapsed > 0 ? static_cast<double>(done) * 60.0 / elapsed : 0.0, eta, what);
    if (tty_) {
      if (line.size() > 150) line = line.substr(0, 150);
      std::fprintf(stderr, "\r\033[K%s", line.c_str());
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::fflush(stderr);
  }

  std::size_t builds_, evals_;
  std::size_t built_ = 0, done_ = 0;
  bool quiet_, tty_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
};

std::string job_label(const Job& j) {
  return fmt::format("{} L{} P{} S{} {}", j.candidate.run, j.candidate.level, j.candidate.problem_id, j.candidate.sample_id,
                     j.protocol);
}

}  // namespace

int run_command(const RunOptions& o, const std::vector<std::string>& argv, std::ostream& out) {
  for (const auto& p : o.protocols) protocol_by_name(p);  // validates
  precision_from_name(o.precision);
  const std::string worker = find_worker_executable();
  RunScan scan = scan_run(o.problems_dir, o.runs_dir);
  for (const auto& c : scan.unmatched)
    out << fmt::format("kbv run: no problem level {} id {} for {}; skipped\n", c.level, c.problem_id, c.path);

  std::vector<std::string> devices = o.devices.empty() ? detect_devices() : o.devices;
  const bool cpu = devices.front() == "cpu";
  const std::string size = o.size == "auto" ? (cpu ? "small" : "default") : o.size;
  const std::string build_root = fs::absolute(o.build_dir.empty() ? default_cache_dir() + "/builds" : o.build_dir).string();
  if (cpu && !o.quiet) out << "kbv run: no GPU found; running the CPU path (small sizes, CPU timing, no device memory)\n";

  DeviceInfo device = probe_device(worker, devices.front());
  ResultStore store(o.db_path);
  RunRecord record;
  record.argv = argv;
  record.kbv_version = kVersion;
  record.git_commit = kGitCommit;
  record.device_fingerprint = device_fingerprint(device);
  record.device_name = device.name;
  record.protocol = o.protocols.size() == 1 ? o.protocols.front() : "several";
  record.precision = o.precision;
  record.options = {{"problems", o.problems_dir}, {"runs", o.runs_dir}, {"protocols", o.protocols}, {"size", size},
                    {"devices", devices}, {"time_budget", o.time_budget}};
  const std::int64_t run_id = store.begin_run(record);

  // What is left to do: the store's natural key decides (a re-run resumes).
  std::vector<Job> todo;
  std::size_t already = 0;
  for (const auto& [candidate, problem] : scan.matched) {
    Job base{candidate, problem, "", sha256_file(candidate.path), sha256_file(problem.path)};
    for (const auto& protocol : o.protocols) {
      Job job = base;
      job.protocol = protocol;
      Verdict probe;
      probe.problem.sha256 = job.problem_sha;
      probe.problem.size = size;
      probe.candidate.sha256 = job.candidate_sha;
      probe.protocol = protocol;
      probe.protocol_version = protocol_by_name(protocol).version;
      probe.precision = o.precision;
      probe.device = device;
      SampleRef sample{candidate.run, candidate.path, candidate.level, candidate.problem_id, candidate.sample_id};
      if (store.has_verdict(ResultStore::key_of(sample, probe))) {
        ++already;
        continue;
      }
      todo.push_back(job);
    }
  }
  if (!o.quiet)
    out << fmt::format("kbv run: {} candidates x {} protocol(s): {} to evaluate, {} already in {}\n", scan.matched.size(),
                       o.protocols.size(), todo.size(), already, o.db_path);

  g_interrupted = false;
  auto previous_int = std::signal(SIGINT, on_interrupt);
  auto previous_term = std::signal(SIGTERM, on_interrupt);
  std::mutex store_mutex;  // the only writer is this process; its threads take turns

  auto make_run = [&](const Job& job, const std::string& dev) {
    EvaluationRun run;
    run.worker_path = worker;
    run.argv = argv;
    run.cancel = &g_interrupted;
    run.device = device;
    run.limits = {o.compile_timeout, o.run_timeout};
    run.job.problem_path = fs::absolute(job.problem.path).string();
    run.job.candidate_path = fs::absolute(job.candidate.path).string();
    run.job.protocol = job.protocol;
    run.job.precision = o.precision;
    run.job.device = dev;
    run.job.size = size;
    run.job.build_root = build_root;
    run.job.secret = std::random_device{}() ^ (static_cast<std::uint64_t>(std::random_device{}()) << 32);
    run.job.timing.budget_seconds = o.time_budget;
    run.job.sandbox_memory_bytes = static_cast<std::int64_t>(o.sandbox_memory_gib * (1LL << 30));
    return run;
  };
  auto store_verdict = [&](const Job& job, const Verdict& v) {
    std::lock_guard<std::mutex> lock(store_mutex);
    store.put_verdict(job.candidate.run, job.candidate.path, job.candidate.level, job.candidate.problem_id,
                      job.candidate.sample_id, v, run_id);
  };

  // Phase 1: build each distinct candidate once, in parallel. A failed build is the verdict
  // for every protocol of that candidate; the rest go on to evaluation with a warm cache.
  std::map<std::string, std::vector<std::size_t>> by_source;  // candidate sha -> jobs
  for (std::size_t i = 0; i < todo.size(); ++i) by_source[todo[i].candidate_sha].push_back(i);
  // Sources this cache already holds for this device and kbv need no build-only worker.
  BuiltIndex built_index(build_root, record.device_fingerprint);
  std::vector<std::string> sources;
  std::size_t cached_sources = 0;
  for (const auto& [sha, jobs] : by_source) {
    if (built_index.built_dir(sha)) ++cached_sources;
    else sources.push_back(sha);
  }
  Progress progress(sources.size(), todo.size(), o.quiet);
  // One byte per job (not vector<bool>: builder threads set different jobs concurrently).
  std::vector<char> settled(todo.size(), 0);
  std::atomic<std::size_t> next_build{0};
  RunThroughput throughput;
  std::mutex throughput_mutex;
  auto phase_start = std::chrono::steady_clock::now();
  auto seconds_since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  int build_threads = o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> builders;
  for (int t = 0; t < build_threads; ++t) {
    builders.emplace_back([&] {
      for (std::size_t s; !g_interrupted && (s = next_build++) < sources.size();) {
        const auto& jobs = by_source.at(sources[s]);  // read-only from the builder threads
        EvaluationRun run = make_run(todo[jobs.front()], devices.front());
        run.job.build_only = true;
        Verdict v = run_evaluation(run);
        if (g_interrupted) return;
        {
          std::lock_guard<std::mutex> lock(throughput_mutex);
          throughput.add_build(v);
        }
        bool built = v.outcome == Outcome::skipped && v.stage == "built";
        if (built && v.build && !v.build->build_dir.empty()) built_index.mark_built(sources[s], v.build->build_dir);
        if (!built) {
          for (std::size_t j : jobs) {
            Verdict copy = v;
            copy.protocol = todo[j].protocol;
            copy.protocol_version = protocol_by_name(todo[j].protocol).version;
            store_verdict(todo[j], copy);
            settled[j] = 1;
            progress.evaluated(job_label(todo[j]) + ": " + std::string(outcome_name(v.outcome)));
          }
        }
        progress.built(todo[jobs.front()].candidate.path);
      }
    });
  }
  for (auto& t : builders) t.join();
  throughput.build_jobs = build_threads;
  throughput.builds_cached = cached_sources;
  throughput.build_phase_seconds = seconds_since(phase_start);
  phase_start = std::chrono::steady_clock::now();
  if (!o.quiet && !by_source.empty())
    out << fmt::format("kbv run: build phase done: {} candidate sources built in {:.1f} s wall, {} at a time ({:.1f} s of worker "
                       "time); {} already in the build cache\n",
                       throughput.builds, throughput.build_phase_seconds, build_threads, throughput.build_worker_seconds,
                       cached_sources)
        << std::flush;

  // Phase 2: evaluate, one job at a time per device.
  std::atomic<std::size_t> next_eval{0};
  std::vector<std::thread> evaluators;
  for (const auto& dev : devices) {
    evaluators.emplace_back([&, dev] {
      for (std::size_t j; !g_interrupted && (j = next_eval++) < todo.size();) {
        if (settled[j]) continue;
        Verdict v = run_evaluation(make_run(todo[j], dev));
        if (g_interrupted) return;  // a cancelled evaluation is not a verdict: the re-run redoes it
        store_verdict(todo[j], v);
        {
          std::lock_guard<std::mutex> lock(throughput_mutex);
          throughput.add_evaluation(v);
        }
        progress.evaluated(job_label(todo[j]) + ": " + std::string(outcome_name(v.outcome)));
      }
    });
  }
  for (auto& t : evaluators) t.join();
  throughput.eval_phase_seconds = seconds_since(phase_start);
  progress.finish();
  std::signal(SIGINT, previous_int);
  std::signal(SIGTERM, previous_term);

  if (g_interrupted) {
    store.finish_run(run_id, "interrupted", {{"throughput", throughput.to_json()}});
    out << "kbv run: interrupted; verdicts so far are in " << o.db_path << "; run the same command again to resume\n";
    return 130;
  }
  store.finish_run(run_id, "finished", {{"throughput", throughput.to_json()}});
  if (!o.quiet) {
    if (!todo.empty()) out << "kbv run: where the time went\n" << throughput.describe();
    out << fmt::format("kbv run: done; {} verdicts in {} (kbv report --db {})\n", store.verdict_count(), o.db_path, o.db_path);
  }
  return 0;
}

}  // namespace kbv
