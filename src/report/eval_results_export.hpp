#pragma once
// `kbv export`: the results store as KernelBench's or KernelBench-Verified's result files, in
// KernelBench's place for a run's results (export_layout.hpp):
// One layout: OUT/<run>/eval_results.json, one level per file (--level L for a run of several).
// - kernelbench (default): OUT/<run>/eval_results.json, problem id -> list of samples
//   (kernelbench_sample.hpp), from one protocol (default the strictest present).
// - kernelbench-verified: OUT/<run>/eval_results.json, flat "{pid}_{sid}" keys with
//   peak_memory, from `standard` (KBV's standard run; else the strictest present), plus
//   OUT/<run>/eval_results_hidden.json from `verified` (else `strict`): verified_results.hpp.
#include <optional>
#include <string>
#include <vector>

#include "store/result_fields.hpp"

namespace kbv {

enum class ExportFormat { kernelbench, kernelbench_verified };

// "kernelbench" / "kernelbench-verified"; throws UsageError naming both for anything else.
ExportFormat export_format_from_name(const std::string& name);

struct ExportOptions {
  ExportFormat format = ExportFormat::kernelbench;
  std::string protocol;  // eval_results.json's protocol; "" = the format's default
  std::optional<int> level;  // only this level (a run of several levels needs one)
  // Replace result files kbv did not write (KernelBench's own, say); without it they are refused.
  bool force = false;
};

struct ExportResult {
  std::string protocol;  // the protocol of eval_results.json
  int protocol_version = 0;
  std::string hidden_protocol;  // of eval_results_hidden.json; "" when none was written
  int hidden_protocol_version = 0;
  std::vector<std::string> files;  // written, in order
  int left_out = 0;                // verdicts with no KernelBench row (skipped, internal_error...)
  int left_out_cuda = 0;           // of those, CUDA candidates skipped on a machine without a GPU
  int rows = 0;                    // entries written to the eval_results.json files
};

// Writes every run's files under out_dir. Throws UsageError when the protocol has no verdicts,
// a run spans several levels and options.level is unset, a file exists that kbv did not write
// (unless options.force), or out_dir cannot be written.
ExportResult export_eval_results(const std::vector<VerdictRecord>& records,
                                 const std::string& out_dir, const ExportOptions& options);

}  // namespace kbv
