#pragma once
// The jobs of a `kbv run`: every (candidate, protocol) the scan found, with what the store holds
// under its key and whether it is evaluated (resume_rule.hpp). `kbv run --list` prints it.
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "core/verdict.hpp"
#include "orchestrate/resume_rule.hpp"
#include "orchestrate/run_scan.hpp"
#include "store/result_store.hpp"

namespace kbv {

// What every verdict of the run is measured under, besides its files and protocol.
struct RunConditions {
  std::string precision = "fp32";
  std::string size = "default";
  DeviceInfo device;     // as probed
  VerdictLimits limits;
  std::string hidden_tests_dir;  // --hidden-tests: KernelBench-Verified's hidden_tests folder; "" none
  bool torch_compile = false;    // --torch-compile
};

struct RunJob {
  CandidateFile candidate;
  ProblemFile problem;
  std::string protocol;
  std::string candidate_sha;
  std::string problem_sha;
  std::optional<FileRef> hidden_tests;  // the problem's hidden-test file, when the run has one
  std::optional<StoredVerdictSummary> stored;
  ResumeChoice choice;
  // Why its evaluation will be skipped, said ahead (--list, the run's first lines): "" none.
  // A CUDA candidate on a CPU device: the judge will record it `skipped`.
  std::string will_skip;
};

struct RunPlan {
  std::vector<RunJob> jobs;             // in scan order, protocols in the order given
  std::vector<SkippedPath> unreadable;  // files that could not be hashed
  std::size_t to_evaluate() const;
  std::size_t will_skip() const;  // of those to evaluate, the ones with a will_skip reason
};

SampleRef sample_of(const RunJob& job);

// A problem's file in KernelBench-Verified's hidden_tests layout: <dir>/level<L>/<id>_hidden.py,
// or <dir>/<id>_hidden.py when <dir> is a folder of one level (it has no level* folders). ""
// when there is none.
std::string hidden_test_file(const std::string& dir, int level, int problem_id);
VerdictKey key_of(const RunJob& job, const RunConditions& conditions);

// `store` nullptr: nothing is stored (e.g. --list before the DB exists).
// What a run on `device` will say of the plan's skips ahead, as one line ("" when none will be):
// "kbv run: 5 of 8 job(s) to evaluate will be skipped: CUDA candidates need a GPU ...".
std::string describe_will_skip(const RunPlan& plan);

RunPlan plan_run(const RunScan& scan, const std::vector<std::string>& protocols, const RunConditions& conditions,
                 ResultStore* store);

// One line per job: run, level, problem, sample, protocol, what is stored, what kbv run would do
// (and why a job it evaluates will end as skipped), then the counts.
void print_plan(const RunPlan& plan, std::ostream& out);

// A verdict says what was measured even when the worker could not (it died first, or it failed
// itself): whatever it left empty is filled from the job, so its key is the job's key.
void complete_identity(Verdict& v, const RunJob& job, const RunConditions& conditions);

}  // namespace kbv
