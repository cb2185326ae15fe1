#pragma once
// Finding the work of `kbv run`: problems in a KernelBench-layout suite (levelN/{id}_{Name}.py)
// and candidates in runs folders (runs/{run}/level_{L}_problem_{P}_sample_{S}_kernel.py),
// matched by (level, problem id).
#include <map>
#include <string>
#include <utility>
#include <vector>

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

struct RunScan {
  std::map<std::pair<int, int>, ProblemFile> problems;  // (level, id) -> problem
  std::vector<std::pair<CandidateFile, ProblemFile>> matched;
  std::vector<CandidateFile> unmatched;                  // no problem with that level and id
};

// Problems under `suite_dir` (folders level1, level2... or level_1...). Throws UsageError when
// the folder does not exist or holds no problem.
std::map<std::pair<int, int>, ProblemFile> scan_problems(const std::string& suite_dir);

// Candidates under `runs_dir`: each sub-folder is a run; if `runs_dir` itself holds kernel
// files it is one run named after the folder. Sorted by run, level, problem, sample.
std::vector<CandidateFile> scan_candidates(const std::string& runs_dir);

RunScan scan_run(const std::string& suite_dir, const std::string& runs_dir);

}  // namespace kbv
