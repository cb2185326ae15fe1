#pragma once
// KernelBench-Verified's result files (facebookresearch/kernel_bench_verified), as its scripts
// read them (scripts/benchmark_eval_analysis.py parse_eval_results and merge_hidden_eval,
// scripts/generate_leaderboard.py):
// - runs/{run}/eval_results.json: ONE flat object keyed "{problem_id}_{sample_id}", each value a
//   KernelBench sample entry plus "peak_memory" (bytes allocated at the peak of one forward,
//   torch.cuda.max_memory_allocated; -1 when not measured).
// - runs/{run}/eval_results_hidden.json: the same keys, from its hidden run over the four
//   distributions D1 x1, D2 x3, D3 x0.01, D4 x-1 ("config_1".."config_4"); correctness is
//   "passed every distribution", metadata says which configs failed (hidden_failed_configs,
//   hidden_correctness_trials "(passed / run)", hidden_runtime_error); no timing (runtime -1).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "store/result_fields.hpp"

namespace kbv {

// "config_N" for kbv's hidden distribution "DN_..." (N in 1..4); "" for any other name.
std::string verified_config_name(const std::string& distribution);

nlohmann::ordered_json verified_sample(const VerdictRecord& r);
nlohmann::ordered_json verified_hidden_sample(const VerdictRecord& r);

// A whole file, keyed "{problem_id}_{sample_id}" in (problem, sample) order; rows KernelBench
// would not have (kernelbench_has_row) are left out.
nlohmann::ordered_json verified_eval_results(const std::vector<const VerdictRecord*>& records);
nlohmann::ordered_json verified_hidden_results(const std::vector<const VerdictRecord*>& records);

}  // namespace kbv
