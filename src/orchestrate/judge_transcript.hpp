#pragma once
// What a judge said about one of its jobs, and the verdicts kbv makes of it: kbv's side of the
// judge's messages (src/judge/report_channel.hpp) for one job. The stage it is in and how long
// each took, the protocols it began, the verdicts it sent, and the deadlines those messages set.
// A judge evaluates one job (run_evaluations) or, kept warm, several in turn
// (run_evaluation_batch): one transcript per job either way.
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/verdict.hpp"
#include "orchestrate/evaluation_run.hpp"
#include "orchestrate/stage_clock.hpp"
#include "orchestrate/subprocess.hpp"

namespace kbv {

class JudgeTranscript {
 public:
  // `run`: the job and its limits. `began`: when the judge began it (its start, or its "job"
  // message). `gated`: it waits for the device's turn first (only a judge's first job does).
  JudgeTranscript(const EvaluationRun& run, Clock::time_point began, bool gated);

  // The judge's backstop for this job once it is under way (its own deadlines come first).
  double backstop_seconds() const { return backstop_; }
  // One of this job's messages: the judge's new deadline, or nullopt to keep the one it has.
  std::optional<Clock::time_point> hear(const nlohmann::json& message);
  bool sent_verdict() const { return verdicts_at_.has_value(); }

  // The job's verdicts. `ended`: how the judge process ended, when this job was the one under way
  // (nullopt: the judge finished it and went on). `output`: what was printed during the job
  // (head, tail and byte count, as ProcessResult keeps them). `started_at`: the UTC time the
  // judge was started. `until`: when the job ended (the judge's next "job" message, or now).
  std::vector<Verdict> verdicts(const std::optional<ProcessResult>& ended, const ProcessResult& output,
                                const std::string& started_at, Clock::time_point until = Clock::now());

 private:
  const EvaluationRun& run_;
  const bool gated_;
  const Clock::time_point began_;
  double backstop_ = 0, turn_backstop_ = 0;
  StageClock stage_clock_;
  std::optional<Clock::time_point> verdicts_at_;  // when its (first) verdict came
  bool released_ = false;
  std::vector<std::pair<std::string, nlohmann::json>> sent_;  // (protocol as it said, verdict)
  std::vector<std::string> begun_;                            // protocols in the order it began them
  std::map<std::string, std::map<std::string, double>> stages_of_;  // protocol -> its stage seconds
};

// The deadline `seconds` from now.
Clock::time_point after(double seconds);

// When the judge sent `message` (its "at_us", on the host's monotonic clock, which is kbv's), or
// now when it carries none or one that cannot be (ahead of now, or over an hour old): the stages
// are timed by when the judge entered them, not by when kbv got round to reading the message.
Clock::time_point sent_at(const nlohmann::json& message);

}  // namespace kbv
