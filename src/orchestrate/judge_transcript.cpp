#include "orchestrate/judge_transcript.hpp"

#include <unistd.h>

#include <algorithm>
#include <sstream>

#include "core/protocol.hpp"
#include "core/sha256.hpp"
#include "core/stage.hpp"
#include "core/stage_group.hpp"
#include "core/version.hpp"
#include "scan/scan.hpp"

namespace kbv {
namespace {

// How long a judge may take, once it has sent a job's verdicts, to exit or to begin its next job
// (it only stops its runners' leftovers; 0.3-0.5 s on the H200).
constexpr double kAfterVerdictsGraceSeconds = 30;

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

Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

Clock::time_point sent_at(const nlohmann::json& message) {
  const auto now = Clock::now();
  auto at = message.find("at_us");
  if (at == message.end() || !at->is_number_integer()) return now;
  const Clock::time_point said{std::chrono::duration_cast<Clock::duration>(std::chrono::microseconds(at->get<std::int64_t>()))};
  if (said > now || now - said > std::chrono::hours(1)) return now;
  return said;
}

JudgeTranscript::JudgeTranscript(const EvaluationRun& run, Clock::time_point began, bool gated)
    : run_(run), gated_(gated), began_(began), stage_clock_(began) {
  // A backstop behind the judge's own deadlines (start-up of two interpreters included), for the
  // judge's start and build and again for each protocol it begins.
  constexpr double kJudgeSlackSeconds = 120;
  const double compile_allowance = run.job.timing.torch_compile ? defaults::kTorchCompileAllowanceSeconds : 0;
  backstop_ = run.limits.compile_timeout_seconds + run.limits.run_timeout_seconds + kJudgeSlackSeconds + compile_allowance;
  // The turns before this one may each serve every protocol.
  turn_backstop_ = backstop_ * static_cast<double>(protocol_names().size());
}

std::optional<Clock::time_point> JudgeTranscript::hear(const nlohmann::json& message) {
  auto event = message.find("event");
  if (event == message.end() || !event->is_string()) return std::nullopt;
  const Clock::time_point at = sent_at(message);
  if (*event == "stage") {
    auto stage = message.find("stage");
    if (stage == message.end() || !stage->is_string()) return std::nullopt;
    std::string name = stage->get<std::string>().substr(0, 64);
    // The judge is trusted. Its start-up is bounded by one backstop; waiting for its turn by
    // the turns that may come first, each bounded by its own start-up and backstops; and its
    // evaluation, from the first message after the wait, by one backstop again. Its start-up
    // counts as done ahead up to the moment the gate opened.
    const bool waiting = stage_clock_.current() == stage_name(Stage::waiting);
    if (gated_ && name == stage_name(Stage::waiting) && !waiting) {
      stage_clock_.enter(name, at);
      return after(turn_backstop_ * (2 * std::max(run_.turns_ahead, 1) + 1));
    }
    if (gated_ && waiting) {
      auto opened = run_.gate_opened_at ? run_.gate_opened_at() : std::nullopt;
      double overlapped = opened ? std::chrono::duration<double>(*opened - began_).count() : 0;
      stage_clock_.fold_ahead(std::string(kAheadStage), overlapped, name, at);
      return after(backstop_);
    }
    stage_clock_.enter(name, at);
  } else if (*event == "protocol" && message.contains("protocol") && message["protocol"].is_string()) {
    // One sandbox serves the next protocol: the stages up to here were the previous one's (the
    // first keeps the shared start-up and build), and the new one has its own backstop.
    std::string name = message["protocol"].get<std::string>().substr(0, 64);
    if (!begun_.empty()) {
      auto& into = stages_of_[begun_.back()];
      for (const auto& [stage, seconds] : stage_clock_.take(at)) into[stage] += seconds;
    }
    begun_.push_back(name);
    return after(backstop_);
  } else if (*event == "verdict" && message.contains("verdict")) {
    std::string protocol = message["verdict"].is_object() ? message["verdict"].value("protocol", "") : "";
    sent_.emplace_back(protocol, message["verdict"]);
    // The judge sends its verdicts together, once its sandbox has ended, and then exits (or begins
    // its next job): one whose exit hangs (a CUDA context a candidate's fault left stuck in
    // teardown) must not hold the device's next turn for the whole backstop.
    verdicts_at_ = Clock::now();
    return after(kAfterVerdictsGraceSeconds);
  } else if (*event == "released" && !released_) {
    // The judge's sandbox and twin have ended and its verdicts are sent: what is left is its
    // own exit (its CUDA context's teardown), which the device's next turn need not wait for.
    released_ = true;
    stage_clock_.enter(std::string(kExitStage), at);
    if (run_.on_released) run_.on_released();
  }
  return std::nullopt;  // otherwise deadlines are absolute: no message moves them
}

std::vector<Verdict> JudgeTranscript::verdicts(const std::optional<ProcessResult>& ended, const ProcessResult& output,
                                               const std::string& started_at, Clock::time_point until) {
  const std::vector<std::string> asked = job_protocols(run_.job);
  // Killed after its verdicts: they stand (the judge had finished), with a word on it.
  const bool stuck_after_verdicts = ended && ended->timed_out && verdicts_at_;
  const std::string last_stage = stage_clock_.current();
  {
    auto& into = stages_of_[begun_.empty() ? asked.front() : begun_.back()];
    for (const auto& [stage, seconds] : stage_clock_.finish(until)) into[stage] += seconds;
  }

  // Each verdict to the protocol it names; one that names none the judge was asked for (a judge
  // that failed before it knew) to the protocol it was in, else the first one still open.
  std::vector<std::pair<std::string, std::optional<nlohmann::json>>> got;
  auto taken = [&](const std::string& p) {
    return std::any_of(got.begin(), got.end(), [&](const auto& g) { return g.first == p; });
  };
  auto open_protocol = [&]() -> std::optional<std::string> {
    if (!begun_.empty() && !taken(begun_.back())) return begun_.back();
    for (const auto& p : asked)
      if (!taken(p)) return p;
    return std::nullopt;
  };
  for (auto& [named, verdict] : sent_) {
    std::optional<std::string> p;
    if (std::find(asked.begin(), asked.end(), named) != asked.end() && !taken(named)) p = named;
    else p = open_protocol();
    if (p) got.emplace_back(*p, std::move(verdict));
  }
  // No verdict for the protocol it was in (or, before any, the first): how the judge ended is that
  // one's verdict. Protocols it never began are the caller's to evaluate again.
  if (auto p = begun_.empty() ? std::optional<std::string>(asked.front()) : std::optional<std::string>(begun_.back()); p && !taken(*p))
    got.emplace_back(*p, std::nullopt);

  std::vector<Verdict> out;
  for (auto& [protocol, sent_verdict] : got) {
    Verdict v;
    v.protocol = protocol;
    v.precision = run_.job.precision;
    v.problem.path = run_.job.problem_path;
    v.candidate.path = run_.job.candidate_path;
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
      // A job the judge went on from always has its verdicts: `ended` is set for this one.
      describe_lost_judge(v, ended.value_or(ProcessResult{}), last_stage, run_.limits);
      v.protocol = protocol;
      v.protocol_version = protocol_by_name(protocol).version;
      v.problem.size = run_.job.size;
      try {
        v.problem.sha256 = sha256_file(run_.job.problem_path);
        if (!run_.job.hidden_tests_path.empty())
          v.problem.hidden_tests = FileRef{run_.job.hidden_tests_path, sha256_file(run_.job.hidden_tests_path)};
        if (!run_.job.candidate_path.empty()) v.candidate.sha256 = sha256_file(run_.job.candidate_path);
      } catch (const std::exception&) {
        // unreadable now: the verdict keeps empty hashes
      }
      if (run_.device) v.device = *run_.device;
    }
    if (v.protocol.empty()) v.protocol = protocol;
    if (parsed && stuck_after_verdicts)
      v.warnings.push_back("kbv-judge did not exit within " + format_seconds(kAfterVerdictsGraceSeconds) +
                           " s of sending its verdicts and was killed (a CUDA context left stuck in teardown?); the "
                           "next evaluation on this device may have run beside it");
    v.output_tail = output.output_bytes > output.output_head.size() + output.output_tail.size()
                        ? output.output_head + "\n[... " + std::to_string(output.output_bytes) + " bytes in all ...]\n" +
                              output.output_tail
                        : output.output_head + output.output_tail;
    // The evaluation's own time, from its turn: its stages but those done ahead. A protocol that
    // shared the start-up and build of the one before it has only its own stages.
    v.stage_seconds = stages_of_.count(protocol) ? stages_of_[protocol] : std::map<std::string, double>{};
    v.wall_seconds = 0;
    for (const auto& [stage, seconds] : v.stage_seconds)
      if (!off_device_stage(stage)) v.wall_seconds += seconds;
    // Strict verdicts carry the static scan's warnings (hints; the runtime checks decide).
    if (protocol == "strict" && !run_.job.candidate_path.empty()) {
      try {
        for (const auto& f : scan::scan_file(run_.job.candidate_path))
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
    v.provenance.argv = run_.argv;
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace kbv
