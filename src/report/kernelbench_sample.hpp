#pragma once
// One sample's entry of KernelBench's eval_results.json, field for field as KernelBench writes it
// (scripts/eval_from_generations.py add_to_eval_results_file, src/eval.py KernelExecResult):
//   {"sample_id", "compiled", "correctness", "metadata", "runtime", "runtime_stats"}
// runtime is the MEAN of the candidate's timed trials, equal to runtime_stats.mean (3
// significant digits, as KernelBench rounds), -1.0 when not timed; runtime_stats is {} then.
// metadata holds KernelBench's keys where kbv knows them, then kbv's own (kbv_*).
#include <nlohmann/json.hpp>
#include <vector>

#include "store/result_fields.hpp"

namespace kbv {

// Whether KernelBench would have written a row for this verdict. It writes none when the
// evaluation itself did not happen (its eval returns None: no GPU, a build-lock clash, a
// harness timeout), so kbv leaves out the verdicts that are no result of the candidate:
// skipped (e.g. a CUDA candidate on a CPU machine), internal_error and problem_error.
bool kernelbench_has_row(const Verdict& v);

// KernelBench's `compiled`: true when its eval got as far as running the model (correct,
// incorrect, or a Python exception in forward: runtime_error); false for a build failure, and
// for what its last-level catch records as cuda_error or other_error (a CUDA error, a crash, a
// hang, a broken protocol): "not runnable code". docs/report.md has the table.
bool kernelbench_compiled(const Verdict& v);

nlohmann::ordered_json kernelbench_metadata(const VerdictRecord& r);
nlohmann::ordered_json kernelbench_sample(const VerdictRecord& r);

// A whole file: problem id (string) -> that problem's samples sorted by sample id; rows
// KernelBench would not have (kernelbench_has_row) are left out.
nlohmann::ordered_json kernelbench_eval_results(const std::vector<const VerdictRecord*>& records);

}  // namespace kbv
