#pragma once
// Where `kbv export` puts a run's files: KernelBench's place for a run's results is the run's own
// folder (runs/{run_name}/eval_results.json, written by scripts/eval_from_generations.py), and a
// KernelBench run holds one level. A kbv run that holds one level maps to OUT/<run>/; one that
// holds several (whose problem ids would collide in one file) to OUT/<run>/level<L>/, which
// KernelBench's scripts read as run_name=<run>/level<L>.
#include <string>
#include <vector>

#include "store/result_fields.hpp"

namespace kbv {

struct ExportGroup {
  std::string folder;  // relative to the output folder: "<run>" or "<run>/level<L>"
  int level = 0;
  std::vector<const VerdictRecord*> records;  // latest verdict of each (problem, sample)
};

// A run label as a folder name: [A-Za-z0-9._-] kept, anything else '_'; never "", "." or "..".
std::string run_folder_name(const std::string& label);

// The verdicts of `protocol` at `protocol_version`, grouped by (run, level), the latest of each
// sample only. `labels` are the run labels of `records` (run_labels()).
std::vector<ExportGroup> export_groups(const std::vector<VerdictRecord>& records,
                                       const std::vector<std::string>& labels,
                                       const std::string& protocol, int protocol_version);

// The highest version of `protocol` among the records; 0 when it has none.
int current_protocol_version(const std::vector<VerdictRecord>& records,
                             const std::string& protocol);

}  // namespace kbv
