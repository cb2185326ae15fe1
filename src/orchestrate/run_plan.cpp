#include "orchestrate/run_plan.hpp"

#include <algorithm>
#include <filesystem>
#include <ostream>

#include <fmt/format.h>

#include "core/cuda_source.hpp"
#include "core/protocol.hpp"
#include "core/sha256.hpp"

namespace kbv {

std::size_t RunPlan::to_evaluate() const {
  return static_cast<std::size_t>(std::count_if(jobs.begin(), jobs.end(), [](const RunJob& j) { return j.choice.evaluate; }));
}

std::size_t RunPlan::will_skip() const {
  return static_cast<std::size_t>(
      std::count_if(jobs.begin(), jobs.end(), [](const RunJob& j) { return j.choice.evaluate && !j.will_skip.empty(); }));
}

std::string describe_will_skip(const RunPlan& plan) {
  const std::size_t n = plan.will_skip();
  if (n == 0) return "";
  return fmt::format("kbv run: {} of {} job(s) to evaluate will be skipped: CUDA candidates need a GPU (this machine has "
                     "none; run on one with a GPU, or --device cuda)\n",
                     n, plan.to_evaluate());
}

SampleRef sample_of(const RunJob& job) {
  const auto& c = job.candidate;
  return {c.run, c.path, c.level, c.problem_id, c.sample_id};
}

std::string hidden_test_file(const std::string& dir, int level, int problem_id) {
  namespace fs = std::filesystem;
  if (dir.empty() || problem_id < 0) return "";
  const std::string name = std::to_string(problem_id) + "_hidden.py";
  std::error_code ec;
  fs::path in_level = fs::path(dir) / ("level" + std::to_string(level)) / name;
  if (fs::is_regular_file(in_level, ec)) return fs::absolute(in_level).string();
  // A flat folder holds one level's files: only when DIR has no level folders at all, else
  // another level's <id>_hidden.py would be taken for this problem's.
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.is_directory(ec) && entry.path().filename().string().rfind("level", 0) == 0) return "";
  fs::path flat = fs::path(dir) / name;
  if (fs::is_regular_file(flat, ec)) return fs::absolute(flat).string();
  return "";
}

VerdictKey key_of(const RunJob& job, const RunConditions& conditions) {
  Verdict probe;
  probe.outcome = Outcome::internal_error;  // says nothing of its own: the job's identity throughout
  complete_identity(probe, job, conditions);
  return ResultStore::key_of(sample_of(job), probe);
}

RunPlan plan_run(const RunScan& scan, const std::vector<std::string>& protocols, const RunConditions& conditions,
                 ResultStore* store) {
  RunPlan plan;
  for (const auto& [candidate, problem] : scan.matched) {
    RunJob base{candidate, problem, "", "", "", std::nullopt, std::nullopt, {}, ""};
    try {
      base.candidate_sha = sha256_file(candidate.path);
      base.problem_sha = sha256_file(problem.path);
    } catch (const std::exception& e) {
      plan.unreadable.push_back({candidate.path, e.what()});
      continue;
    }
    if (std::string hidden = hidden_test_file(conditions.hidden_tests_dir, problem.level, problem.id); !hidden.empty()) {
      try {
        base.hidden_tests = FileRef{hidden, sha256_file(hidden)};
      } catch (const std::exception& e) {
        plan.unreadable.push_back({candidate.path, "its problem's hidden-test file " + hidden + ": " + e.what()});
        continue;
      }
    }
    if (conditions.device.kind == "cpu" && file_needs_cuda(candidate.path)) base.will_skip = "CUDA candidates need a GPU";
    for (const auto& protocol : protocols) {
      RunJob job = base;
      job.protocol = protocol;
      if (store) job.stored = store->stored_summary(key_of(job, conditions));
      job.choice = resume_choice(job.stored, conditions.limits,
                                 {job.hidden_tests ? job.hidden_tests->sha256 : "", conditions.torch_compile});
      plan.jobs.push_back(std::move(job));
    }
  }
  return plan;
}

void print_plan(const RunPlan& plan, std::ostream& out) {
  std::size_t run_width = 3;
  for (const auto& j : plan.jobs) run_width = std::max(run_width, j.candidate.run.size());
  out << fmt::format("{:<{}}  {:>5}  {:<28}  {:>6}  {:<8}  {:<14}  {}\n", "run", run_width, "level", "problem", "sample",
                     "protocol", "stored", "kbv run would");
  for (const auto& j : plan.jobs) {
    std::string problem = fmt::format("{} {}", j.problem.id, j.problem.name);
    if (problem.size() > 28) problem = problem.substr(0, 25) + "...";
    std::string stored = j.stored ? j.stored->outcome : "no";
    std::string action = j.choice.evaluate ? (j.stored ? "evaluate again: " + j.choice.why : "evaluate") : "keep";
    if (j.choice.evaluate && !j.will_skip.empty()) action = "evaluate; will be skipped: " + j.will_skip;
    out << fmt::format("{:<{}}  {:>5}  {:<28}  {:>6}  {:<8}  {:<14}  {}\n", j.candidate.run, run_width, j.candidate.level,
                       problem, j.candidate.sample_id, j.protocol, stored, action);
  }
  out << fmt::format("{} job(s): {} to evaluate, {} kept from the store\n", plan.jobs.size(), plan.to_evaluate(),
                     plan.jobs.size() - plan.to_evaluate());
  out << describe_will_skip(plan);
}

void complete_identity(Verdict& v, const RunJob& job, const RunConditions& conditions) {
  // An internal_error measured nothing, and a verdict without protocol, hashes or device came
  // from a worker that failed before it knew its job: whatever else they say of themselves may
  // be a parser's default ("fp32", "default"), so the job says it all and a re-run finds the
  // row under the job's key.
  bool knows_its_job = !v.protocol.empty() && !v.problem.sha256.empty() && !v.candidate.sha256.empty() &&
                       !v.device.name.empty();
  if (v.outcome == Outcome::internal_error || !knows_its_job) {
    v.protocol = job.protocol;
    v.protocol_version = 0;
    v.precision = conditions.precision;
    v.problem.sha256 = job.problem_sha;
    v.problem.size = conditions.size;
    v.candidate.sha256 = job.candidate_sha;
    v.device = conditions.device;
    v.problem.hidden_tests = job.hidden_tests;
  }
  if (!v.problem.hidden_tests) v.problem.hidden_tests = job.hidden_tests;
  if (v.protocol.empty()) v.protocol = job.protocol;
  if (v.protocol_version <= 0) v.protocol_version = protocol_by_name(v.protocol).version;
  if (v.precision.empty()) v.precision = conditions.precision;
  if (v.problem.sha256.empty()) v.problem.sha256 = job.problem_sha;
  if (v.problem.path.empty()) v.problem.path = job.problem.path;
  if (v.problem.size.empty()) v.problem.size = conditions.size;
  if (v.problem.name.empty()) v.problem.name = job.problem.name;
  if (v.candidate.sha256.empty()) v.candidate.sha256 = job.candidate_sha;
  if (v.candidate.path.empty()) v.candidate.path = job.candidate.path;
  if (v.device.name.empty()) v.device = conditions.device;
}

}  // namespace kbv
