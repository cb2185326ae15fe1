#pragma once
// KernelBench-compatible eval_results.json from the results store (SPEC "Formats", FORMAT.md):
// one file per run and level, DIR/<run>/level<L>/eval_results.json, keyed by problem id
// (string) -> list of samples {sample_id, compiled, correctness, runtime, runtime_stats,
// metadata}. KernelBench keys problems by id within one level, hence one file per level.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/result_fields.hpp"

namespace kbv {

struct ExportResult {
  std::string protocol;            // the protocol exported
  int protocol_version = 0;
  std::vector<std::string> files;  // written, in order
  std::size_t internal_errors = 0; // kbv's own failures left out (not the candidates' results)
};

// One sample's entry.
nlohmann::ordered_json eval_results_sample(const VerdictRecord& r);
// One level's file: problem id -> samples sorted by sample id. All records: one run, one level.
nlohmann::ordered_json eval_results_json(const std::vector<const VerdictRecord*>& records);
// A run label as a folder name: [A-Za-z0-9._-] kept, anything else '_'; never "", "." or "..".
std::string run_folder_name(const std::string& label);

// Writes every run's files under out_dir for `protocol` ("" = the strictest present; its
// current version only), internal_error verdicts left out. Throws UsageError when the protocol has no verdicts or out_dir
// cannot be written.
ExportResult export_eval_results(const std::vector<VerdictRecord>& records, const std::string& out_dir,
                                 const std::string& protocol);

}  // namespace kbv
