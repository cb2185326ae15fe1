#include "orchestrate/evaluation_run.hpp"

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "core/errors.hpp"
#include "core/job.hpp"
#include "core/utc_time.hpp"
#include "orchestrate/judge_transcript.hpp"
#include "orchestrate/subprocess.hpp"

namespace fs = std::filesystem;

namespace kbv {

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

namespace {

// The judge's command line, environment and limits for `run`'s settings (`jobs` on its stdin).
ProcessSpec judge_spec(const EvaluationRun& run, std::string jobs) {
  ProcessSpec spec;
  spec.argv = {run.worker_path};
  spec.stdin_data = std::move(jobs);
  // Candidates' own progress bars and warnings are noise in a verdict; Python must not buffer
  // what it prints before a crash.
  spec.env_set = {{"PYTHONUNBUFFERED", "1"}, {"PYTHONDONTWRITEBYTECODE", "1"}};
  spec.cancel = run.cancel;
  spec.timeout_signal = SIGUSR1;  // the worker dumps every Python thread's stack on it
  spec.nice = run.nice;
  spec.background = run.background;
  // A device-free build (WorkerJob::build_cuda_arch): the judge needs no GPU either.
  if (device_free_build(run.job)) spec.env_set["CUDA_VISIBLE_DEVICES"] = "";
  if (run.device_gate_fd >= 0) {
    spec.argv.push_back("--device-gate");
    spec.fd5 = run.device_gate_fd;
  }
  return spec;
}

// The job as the judge gets it: the judge enforces the limits on the candidate's sandbox itself,
// as absolute deadlines.
WorkerJob judged_job(const EvaluationRun& run) {
  WorkerJob job = run.job;
  job.compile_timeout_seconds = run.limits.compile_timeout_seconds;
  job.run_timeout_seconds = run.limits.run_timeout_seconds;
  return job;
}

std::optional<nlohmann::json> parse_message(const std::string& line) {
  nlohmann::json message = nlohmann::json::parse(line, nullptr, false);
  if (message.is_discarded() || !message.is_object()) return std::nullopt;
  return message;
}

}  // namespace

std::vector<Verdict> run_evaluations(const EvaluationRun& run) {
  ProcessSpec spec = judge_spec(run, nlohmann::json(judged_job(run)).dump());
  JudgeTranscript transcript(run, Clock::now(), run.device_gate_fd >= 0);
  auto on_message = [&](const std::string& line) -> std::optional<Clock::time_point> {
    auto message = parse_message(line);
    return message ? transcript.hear(*message) : std::nullopt;
  };
  std::string started_at = utc_now_iso();
  ProcessResult process = run_process(spec, after(transcript.backstop_seconds()), on_message);
  if (run.cpu_seconds) *run.cpu_seconds = process.cpu_seconds;
  return transcript.verdicts(process, process, started_at);
}

std::vector<std::vector<Verdict>> run_evaluation_batch(const std::vector<EvaluationRun>& runs, const JobDone& on_job_done) {
  if (runs.empty()) return {};
  const EvaluationRun& first = runs.front();
  nlohmann::json jobs = nlohmann::json::array();
  for (const auto& run : runs) jobs.push_back(judged_job(run));
  ProcessSpec spec = judge_spec(first, jobs.dump());
  spec.argv.push_back("--serve");
  // Each job's own run: its gate's clock and its own end of turn (on_released).
  const std::vector<EvaluationRun>& own = runs;
  struct Job {
    std::unique_ptr<JudgeTranscript> transcript;
    OutputKeeper output;
    std::string started_at;
  };
  std::vector<Job> begun;
  std::vector<std::vector<Verdict>> out(runs.size());
  // A job's verdicts once the judge has gone on from it (or ended while in it: `ended`).
  auto settle = [&](std::size_t i, const std::optional<ProcessResult>& ended, Clock::time_point until) {
    ProcessResult output;
    begun[i].output.finish(output);
    out[i] = begun[i].transcript->verdicts(ended, output, begun[i].started_at, until);
    if (on_job_done) on_job_done(i, out[i]);
  };
  const std::size_t head = spec.keep_head_bytes, tail = spec.keep_tail_bytes;
  // What the judge prints before its first job message (its start-up) goes with the first job.
  begun.push_back({std::make_unique<JudgeTranscript>(own[0], Clock::now(), first.device_gate_fd >= 0), OutputKeeper(head, tail), utc_now_iso()});
  bool first_announced = false;
  auto on_message = [&](const std::string& line) -> std::optional<Clock::time_point> {
    auto message = parse_message(line);
    if (!message) return std::nullopt;
    if (message->value("event", "") != "job") return begun.back().transcript->hear(*message);
    const auto index = message->value("index", std::size_t{0});
    if (index == 0 && !first_announced) {
      first_announced = true;
      return std::nullopt;
    }
    // The judge goes on to the next job only after this one's verdicts; anything else is a judge
    // out of step: not heard, its deadline stands.
    if (index != begun.size() || index >= own.size() || !begun.back().transcript->sent_verdict()) return std::nullopt;
    const Clock::time_point at = sent_at(*message);  // when the judge went on: the job before ended then
    settle(index - 1, std::nullopt, at);
    begun.push_back({std::make_unique<JudgeTranscript>(own[index], at, own[index].device_gate_fd >= 0),
                     OutputKeeper(head, tail), utc_now_iso()});
    return after(begun.back().transcript->backstop_seconds());
  };
  spec.on_output = [&](const char* data, std::size_t size) { begun.back().output.add(data, size); };
  ProcessResult process = run_process(spec, after(begun.back().transcript->backstop_seconds()), on_message);
  if (first.cpu_seconds) *first.cpu_seconds = process.cpu_seconds;
  settle(begun.size() - 1, process, Clock::now());
  return out;
}

Verdict run_evaluation(const EvaluationRun& run) {
  EvaluationRun one = run;
  one.job.protocols.clear();
  return run_evaluations(one).front();
}

}  // namespace kbv
