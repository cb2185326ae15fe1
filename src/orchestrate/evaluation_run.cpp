#include "orchestrate/evaluation_run.hpp"

#include <unistd.h>

#include <algorithm>
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
#include "core/stage.hpp"
#include "core/stage_group.hpp"
#include "core/utc_time.hpp"
#include "core/version.hpp"
#include "orchestrate/stage_clock.hpp"
#include "orchestrate/subprocess.hpp"
#include "scan/scan.hpp"

namespace fs = std::filesystem;

namespace kbv {
namespace {

// How long a judge may take to exit once it has sent its verdicts (it only stops its runners'
// leftovers and leaves; 0.3-0.5 s on the H200).
constexpr double kExitGraceSeconds = 30;

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

// The judge ended without sending its verdict. It never runs candidate code and bounds every
// wait on the candidate by the job's limits, so this is kbv's own failure (or the problem's,
// when it happened while running the reference): never the candidate's result.
void describe_lost_judge(Verdict& v, const ProcessResult& p, const std::string& stage, const EvaluationLimits& limits) {
  v.stage = stage;
  v.outcome = Outcome::internal_error;
  if (p.timed_out && stage == stage_name(Stage::waiting)) {
    v.reason = "kbv-judge, started ahead, waited for its turn on the device longer than the evaluations before it could "
               "take; kbv's own failure: a re-run evaluates it";
    return;
  }
  if (p.timed_out) {
    v.reason = "kbv-judge did not finish within the evaluation's limits (" + format_seconds(limits.compile_timeout_seconds) +
               " s build + " + format_seconds(limits.run_timeout_seconds) + " s run) in stage '" + stage +
               "'; the stacks of its Python threads are at the end of output_tail";
    return;
  }
  v.reason = "kbv-judge " + p.describe() + " during stage '" + stage + "' without a verdict";
}

}  // namespace

std::string find_worker_executable() {
  for (const char* name : {"KBV_JUDGE", "KBV_WORKER"})
    if (const char* env = std::getenv(name); env && *env) return env;
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path candidate = self.parent_path() / "kbv-judge";
    if (fs::exists(candidate)) return candidate.string();
  }
  throw UsageError("kbv-judge not found next to kbv (or in $KBV_JUDGE); was kbv built with LibTorch? Run scripts/setup.sh");
}

std::vector<Verdict> run_evaluations(const EvaluationRun& run) {
  ProcessSpec spec;
  spec.argv = {run.worker_path};
  // The judge enforces the limits on the candidate's sandbox itself, as absolute deadlines.
  WorkerJob job = run.job;
  job.compile_timeout_seconds = run.limits.compile_timeout_seconds;
  job.run_timeout_seconds = run.limits.run_timeout_seconds;
  spec.stdin_data = nlohmann::json(job).dump();
  const std::vector<std::string> asked = job_protocols(run.job);
  // Candidates' own progress bars and warnings are noise in a verdict; Python must not buffer
  // what it prints before a crash.
  spec.env_set = {{"PYTHONUNBUFFERED", "1"}, {"PYTHONDONTWRITEBYTECODE", "1"}};
  spec.cancel = run.cancel;
  spec.timeout_signal = SIGUSR1;  // the worker dumps every Python thread's stack on it
  spec.nice = run.nice;
  spec.background = run.background;
  // A device-free build (WorkerJob::build_cuda_arch): the judge needs no GPU either.
  if (device_free_build(run.job)) spec.env_set["CUDA_VISIBLE_DEVICES"] = "";
  const bool gated = run.device_gate_fd >= 0;
  if (gated) {
    spec.argv.push_back("--device-gate");
    spec.fd5 = run.device_gate_fd;
  }

  // A backstop behind the judge's own deadlines (start-up of two interpreters included), for the
  // judge's start and build and again for each protocol it begins.
  constexpr double kJudgeSlackSeconds = 120;
  const double compile_allowance = run.job.timing.torch_compile ? defaults::kTorchCompileAllowanceSeconds : 0;
  const double backstop = run.limits.compile_timeout_seconds + run.limits.run_timeout_seconds + kJudgeSlackSeconds + compile_allowance;
  // The turns before this one may each serve every protocol.
  const double turn_backstop = backstop * static_cast<double>(protocol_names().size());

  std::optional<Clock::time_point> verdicts_at;  // when its (first) verdict came
  bool released = false;                         // it said the device is free (on_released ran)
  const Clock::time_point spawned = Clock::now();
  StageClock stage_clock(spawned);  // also says which stage the judge is in
  std::vector<std::pair<std::string, nlohmann::json>> sent;  // (protocol as it said, verdict)
  std::vector<std::string> begun;                             // protocols in the order it began them
  std::map<std::string, std::map<std::string, double>> stages_of;  // protocol -> its stage seconds
  auto on_message = [&](const std::string& line) -> std::optional<Clock::time_point> {
    nlohmann::json message = nlohmann::json::parse(line, nullptr, false);
    if (message.is_discarded() || !message.is_object()) return std::nullopt;
    auto event = message.find("event");
    if (event == message.end() || !event->is_string()) return std::nullopt;
    if (*event == "stage") {
      auto stage = message.find("stage");
      if (stage == message.end() || !stage->is_string()) return std::nullopt;
      std::string name = stage->get<std::string>().substr(0, 64);
      // The judge is trusted. Its start-up is bounded by one backstop; waiting for its turn by
      // the turns that may come first, each bounded by its own start-up and backstops; and its
      // evaluation, from the first message after the wait, by one backstop again. Its start-up
      // counts as done ahead up to the moment the gate opened.
      const bool waiting = stage_clock.current() == stage_name(Stage::waiting);
      if (gated && name == stage_name(Stage::waiting) && !waiting) {
        stage_clock.enter(name);
        return after(turn_backstop * (2 * std::max(run.turns_ahead, 1) + 1));
      }
      if (gated && waiting) {
        const auto now = Clock::now();
        auto opened = run.gate_opened_at ? run.gate_opened_at() : std::nullopt;
        double overlapped = opened ? std::chrono::duration<double>(*opened - spawned).count() : 0;
        stage_clock.fold_ahead(std::string(kAheadStage), overlapped, name, now);
        return after(backstop);
      }
      stage_clock.enter(name);
    } else if (*event == "protocol" && message.contains("protocol") && message["protocol"].is_string()) {
      // One sandbox serves the next protocol: the stages up to here were the previous one's (the
      // first keeps the shared start-up and build), and the new one has its own backstop.
      std::string name = message["protocol"].get<std::string>().substr(0, 64);
      if (!begun.empty()) {
        auto& into = stages_of[begun.back()];
        for (const auto& [stage, seconds] : stage_clock.take()) into[stage] += seconds;
      }
      begun.push_back(name);
      return after(backstop);
    } else if (*event == "verdict" && message.contains("verdict")) {
      std::string protocol = message["verdict"].is_object() ? message["verdict"].value("protocol", "") : "";
      sent.emplace_back(protocol, message["verdict"]);
      // The judge sends its verdicts together, once its sandbox has ended, and then exits: one
      // whose exit hangs (a CUDA context a candidate's fault left stuck in teardown) must not
      // hold the device's next turn for the whole backstop.
      verdicts_at = Clock::now();
      return after(kExitGraceSeconds);
    } else if (*event == "released" && !released) {
      // The judge's sandbox and twin have ended and its verdicts are sent: what is left is its
      // own exit (its CUDA context's teardown), which the device's next turn need not wait for.
      released = true;
      stage_clock.enter(std::string(kExitStage));
      if (run.on_released) run.on_released();
    }
    return std::nullopt;  // otherwise deadlines are absolute: no message moves them
  };

  std::string started_at = utc_now_iso();
  ProcessResult process = run_process(spec, after(backstop), on_message);
  // Killed after its verdicts: they stand (the judge had finished), with a word on it.
  const bool stuck_after_verdicts = process.timed_out && verdicts_at;
  if (run.cpu_seconds) *run.cpu_seconds = process.cpu_seconds;
  const std::string last_stage = stage_clock.current();
  {
    auto& into = stages_of[begun.empty() ? asked.front() : begun.back()];
    for (const auto& [stage, seconds] : stage_clock.finish()) into[stage] += seconds;
  }

  // Each verdict to the protocol it names; one that names none the judge was asked for (a judge
  // that failed before it knew) to the protocol it was in, else the first one still open.
  std::vector<std::pair<std::string, std::optional<nlohmann::json>>> got;
  auto taken = [&](const std::string& p) {
    return std::any_of(got.begin(), got.end(), [&](const auto& g) { return g.first == p; });
  };
  auto open_protocol = [&]() -> std::optional<std::string> {
    if (!begun.empty() && !taken(begun.back())) return begun.back();
    for (const auto& p : asked)
      if (!taken(p)) return p;
    return std::nullopt;
  };
  for (auto& [named, verdict] : sent) {
    std::optional<std::string> p;
    if (std::find(asked.begin(), asked.end(), named) != asked.end() && !taken(named)) p = named;
    else p = open_protocol();
    if (p) got.emplace_back(*p, std::move(verdict));
  }
  // No verdict for the protocol it was in (or, before any, the first): how the judge ended is that
  // one's verdict. Protocols it never began are the caller's to evaluate again.
  if (auto p = begun.empty() ? std::optional<std::string>(asked.front()) : std::optional<std::string>(begun.back()); p && !taken(*p))
    got.emplace_back(*p, std::nullopt);

  std::vector<Verdict> out;
  for (auto& [protocol, sent_verdict] : got) {
    Verdict v;
    v.protocol = protocol;
    v.precision = run.job.precision;
    v.problem.path = run.job.problem_path;
    v.candidate.path = run.job.candidate_path;
    bool parsed = false;
    // Only messages sent before the deadline arrive here (run_process drops later ones).
    if (sent_verdict) {
      try {
        v = sent_verdict->get<Verdict>();
        parsed = true;
      } catch (const std::exception& e) {
        v.reason = std::string("unreadable verdict from the worker: ") + e.what();
      }
    }
    if (!parsed) {
      describe_lost_judge(v, process, last_stage, run.limits);
      v.protocol = protocol;
      v.protocol_version = protocol_by_name(protocol).version;
      v.problem.size = run.job.size;
      try {
        v.problem.sha256 = sha256_file(run.job.problem_path);
        if (!run.job.hidden_tests_path.empty())
          v.problem.hidden_tests = FileRef{run.job.hidden_tests_path, sha256_file(run.job.hidden_tests_path)};
        if (!run.job.candidate_path.empty()) v.candidate.sha256 = sha256_file(run.job.candidate_path);
      } catch (const std::exception&) {
        // unreadable now: the verdict keeps empty hashes
      }
      if (run.device) v.device = *run.device;
    }
    if (v.protocol.empty()) v.protocol = protocol;
    if (parsed && stuck_after_verdicts)
      v.warnings.push_back("kbv-judge did not exit within " + format_seconds(kExitGraceSeconds) +
                           " s of sending its verdicts and was killed (a CUDA context left stuck in teardown?); the "
                           "next evaluation on this device may have run beside it");
    v.output_tail = process.output_bytes > process.output_head.size() + process.output_tail.size()
                        ? process.output_head + "\n[... " + std::to_string(process.output_bytes) + " bytes in all ...]\n" +
                              process.output_tail
                        : process.output_head + process.output_tail;
    // The evaluation's own time, from its turn: its stages but those done ahead. A protocol that
    // shared the start-up and build of the one before it has only its own stages.
    v.stage_seconds = stages_of.count(protocol) ? stages_of[protocol] : std::map<std::string, double>{};
    v.wall_seconds = 0;
    for (const auto& [stage, seconds] : v.stage_seconds)
      if (!off_device_stage(stage)) v.wall_seconds += seconds;
    // Strict verdicts carry the static scan's warnings (hints; the runtime checks decide).
    if (protocol == "strict" && !run.job.candidate_path.empty()) {
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
    out.push_back(std::move(v));
  }
  return out;
}

Verdict run_evaluation(const EvaluationRun& run) {
  EvaluationRun one = run;
  one.job.protocols.clear();
  return run_evaluations(one).front();
}

}  // namespace kbv
