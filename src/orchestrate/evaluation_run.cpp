#include "orchestrate/evaluation_run.hpp"

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>
#include <sstream>

#include "core/errors.hpp"
#include "core/protocol.hpp"
#include "core/sha256.hpp"
#include "core/utc_time.hpp"
#include "core/version.hpp"
#include "orchestrate/stage_clock.hpp"
#include "orchestrate/subprocess.hpp"
#include "scan/scan.hpp"

namespace fs = std::filesystem;

namespace kbv {
namespace {

Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

std::string hostname() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

std::string format_seconds(double s) {
  std::ostringstream out;
  out.precision(3);
  out << s;
  return out.str();
}

// The worker died or was killed before sending its verdict: say how, where, and what to do.
void describe_lost_worker(Verdict& v, const ProcessResult& p, const std::string& stage, const EvaluationLimits& limits) {
  v.stage = stage;
  if (p.timed_out) {
    v.outcome = Outcome::timeout;
    bool building = stage == "build";
    double limit = building ? limits.compile_timeout_seconds : limits.run_timeout_seconds;
    v.reason = "timed out after " + format_seconds(limit) + " s in stage '" + stage + "'; " +
               (building ? "raise --compile-timeout if the build is just slow"
                         : "raise --run-timeout, or look for an infinite loop or a deadlock in the candidate") +
               " (the stack of every Python thread at the deadline is at the end of output_tail)";
    return;
  }
  v.outcome = Outcome::crashed;
  v.reason = "worker " + p.describe() + " during stage '" + stage + "' without a verdict";
  if (p.exited) v.reason += " (the candidate called sys.exit/os._exit, or the process was killed)";
}

}  // namespace

std::string find_worker_executable() {
  if (const char* env = std::getenv("KBV_WORKER"); env && *env) return env;
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path candidate = self.parent_path() / "kbv-worker";
    if (fs::exists(candidate)) return candidate.string();
  }
  throw UsageError("kbv-worker not found next to kbv (or in $KBV_WORKER); was kbv built with LibTorch? Run scripts/setup.sh");
}

Verdict run_evaluation(const EvaluationRun& run) {
  ProcessSpec spec;
  spec.argv = {run.worker_path};
  spec.stdin_data = nlohmann::json(run.job).dump();
  // Candidates' own progress bars and warnings are noise in a verdict; Python must not buffer
  // what it prints before a crash.
  spec.env_set = {{"PYTHONUNBUFFERED", "1"}, {"PYTHONDONTWRITEBYTECODE", "1"}};
  spec.cancel = run.cancel;
  spec.timeout_signal = SIGUSR1;  // the worker dumps every Python thread's stack on it

  StageClock stage_clock;  // also says which stage the worker is in
  std::optional<nlohmann::json> worker_verdict;
  auto on_message = [&](const std::string& line) -> std::optional<Clock::time_point> {
    nlohmann::json message = nlohmann::json::parse(line, nullptr, false);
    if (message.is_discarded() || !message.is_object()) return std::nullopt;
    std::string event = message.value("event", "");
    if (event == "stage") {
      std::string next = message.value("stage", "");
      bool was_build = stage_clock.current() == "build";
      stage_clock.enter(next);
      if (next == "build") return after(run.limits.compile_timeout_seconds);
      if (was_build) return after(run.limits.run_timeout_seconds);
    } else if (event == "verdict" && message.contains("verdict")) {
      worker_verdict = message["verdict"];
    }
    return std::nullopt;
  };

  std::string started_at = utc_now_iso();
  ProcessResult process = run_process(spec, after(run.limits.run_timeout_seconds), on_message);
  std::map<std::string, double> stage_seconds = stage_clock.finish();

  Verdict v;
  v.protocol = run.job.protocol;
  v.precision = run.job.precision;
  v.problem.path = run.job.problem_path;
  v.candidate.path = run.job.candidate_path;
  bool parsed = false;
  // Only messages sent before the deadline arrive here (run_process drops later ones).
  if (worker_verdict) {
    try {
      v = worker_verdict->get<Verdict>();
      parsed = true;
    } catch (const std::exception& e) {
      v.reason = std::string("unreadable verdict from the worker: ") + e.what();
    }
  }
  if (!parsed) {
    describe_lost_worker(v, process, stage_clock.current(), run.limits);
    v.protocol_version = protocol_by_name(run.job.protocol).version;
    v.problem.size = run.job.size;
    try {
      v.problem.sha256 = sha256_file(run.job.problem_path);
      if (!run.job.candidate_path.empty()) v.candidate.sha256 = sha256_file(run.job.candidate_path);
    } catch (const std::exception&) {
      // unreadable now: the verdict keeps empty hashes
    }
    if (run.device) v.device = *run.device;
  }

  v.output_tail = process.output_bytes > process.output_head.size() + process.output_tail.size()
                      ? process.output_head + "\n[... " + std::to_string(process.output_bytes) + " bytes in all ...]\n" + process.output_tail
                      : process.output_head + process.output_tail;
  v.wall_seconds = process.wall_seconds;
  v.stage_seconds = std::move(stage_seconds);
  // Strict verdicts carry the static scan's warnings (hints; the runtime checks decide).
  if (run.job.protocol == "strict" && !run.job.candidate_path.empty()) {
    try {
      for (const auto& f : scan::scan_file(run.job.candidate_path))
        if (f.severity == "warning")
          v.warnings.push_back("static scan: " + f.rule + " at line " + std::to_string(f.line) + ": " + f.excerpt);
    } catch (const std::exception& e) {
      v.warnings.push_back(std::string("static scan failed: ") + e.what());
    }
  }
  v.provenance.kbv_version = kVersion;
  v.provenance.git_commit = kGitCommit;
  v.provenance.hostname = hostname();
  v.provenance.started_at = started_at;
  v.provenance.argv = run.argv;
  return v;
}

}  // namespace kbv
