#pragma once
// Where `kbv export` puts a run's files, one layout: OUT/<run>/eval_results.json, KernelBench's
// place for a run's results (runs/{run_name}/eval_results.json, written by
// scripts/eval_from_generations.py). A KernelBench run holds one level (its file is keyed by
// problem id alone), so a kbv run whose verdicts span several levels is exported one level at a
// time (--level L, each to its own --out); without it the export is refused, naming the levels.
#include <optional>
#include <string>
#include <vector>

#include "store/result_fields.hpp"

namespace kbv {

struct ExportGroup {
  std::string folder;  // relative to the output folder: "<run>"
  int level = 0;
  std::vector<const VerdictRecord*> records;  // latest verdict of each (problem, sample)
};

// A run label as a folder name: [A-Za-z0-9._-] kept, anything else '_'; never "", "." or "..".
std::string run_folder_name(const std::string& label);

// The verdicts of `protocol` at `protocol_version` (of `level` only, when given), grouped by run,
// the latest of each sample only. `labels` are the run labels of `records` (run_labels()).
// Throws UsageError when a run's verdicts span several levels and no level is given.
std::vector<ExportGroup> export_groups(const std::vector<VerdictRecord>& records,
                                       const std::vector<std::string>& labels,
                                       const std::string& protocol, int protocol_version,
                                       std::optional<int> level = std::nullopt);

// The highest version of `protocol` among the records; 0 when it has none.
int current_protocol_version(const std::vector<VerdictRecord>& records,
                             const std::string& protocol);

}  // namespace kbv
