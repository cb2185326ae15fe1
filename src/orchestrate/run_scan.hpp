#pragma once
// Finding the work of `kbv run`: problems in a KernelBench-layout suite (levelN/{id}_{Name}.py)
// and candidates in runs folders (runs/{run}/level_{L}_problem_{P}_sample_{S}_kernel.py),
// matched by (level, problem id). A file or folder whose name kbv cannot use (a number out of
// range) is skipped and named, never the end of the run.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "orchestrate/shard.hpp"

namespace kbv {

struct ProblemFile {
  std::string path;
  int level = 0;
  int id = 0;
  std::string name;
};

struct CandidateFile {
  std::string run;   // the run (model) folder's name
  std::string path;
  int level = 0;
  int problem_id = 0;
  int sample_id = 0;
};

// A file or folder left out, and why.
struct SkippedPath {
  std::string path;
  std::string why;
};

// Two or more problem files with one (level, id), e.g. 19_ReLU.py and 019_ReLU.py.
struct DuplicateProblem {
  int level = 0;
  int id = 0;
  std::vector<std::string> paths;  // sorted
};

// Which part of the runs to take (kbv run --level/--ids/--run/--shard); empty parts take everything.
struct RunFilter {
  std::optional<int> level;
  std::set<int> problem_ids;
  std::set<std::string> runs;
  std::optional<Shard> shard;  // only the candidates of this shard (shard.hpp)
  bool accepts(const CandidateFile& c) const;
};

struct RunScan {
  std::map<std::pair<int, int>, ProblemFile> problems;  // (level, id) -> problem
  std::vector<std::pair<CandidateFile, ProblemFile>> matched;
  std::vector<CandidateFile> unmatched;                  // no problem with that level and id
  std::vector<SkippedPath> skipped;                      // names kbv cannot use
  // What no sandbox of the run sees into (WorkerJob::batch_folders): scan_candidates'
  // candidates_root, and the real folder of every candidate that lies outside it (a run folder
  // that is a link to elsewhere).
  std::vector<std::string> batch_folders;
  std::vector<DuplicateProblem> duplicates;              // in the suite, but no candidate needs them
};

// Problems under `suite_dir` (folders level1, level2... or level_1...). Throws UsageError when
// the folder does not exist or holds no problem. Names out of range go to `skipped`; problems
// that share a (level, id) go to `duplicates` and none of them is in the map.
std::map<std::pair<int, int>, ProblemFile> scan_problems(const std::string& suite_dir,
                                                         std::vector<SkippedPath>* skipped = nullptr,
                                                         std::vector<DuplicateProblem>* duplicates = nullptr);

// Candidates under `runs_dir`: each sub-folder is a run; if `runs_dir` itself holds kernel
// files it is one run named after the folder. Sorted by run, level, problem, sample.
// `candidates_root`: the folder the run's sandboxes must not see into (RunScan::batch_folders):
// the runs folder, or, when it is one run's folder (as `kbv generate --then-run` passes), the
// folder of runs around it. Canonical.
std::vector<CandidateFile> scan_candidates(const std::string& runs_dir, std::vector<SkippedPath>* skipped = nullptr,
                                           std::string* candidates_root = nullptr);

// Throws UsageError when two candidate files the filter takes name one sample (both named), or
// when a candidate the filter takes needs a problem the suite holds twice: which
// file is the problem is the user's call (rename or remove one), not kbv's guess.
RunScan scan_run(const std::string& suite_dir, const std::string& runs_dir, const RunFilter& filter = {});

}  // namespace kbv
