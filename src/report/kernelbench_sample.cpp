#include "report/kernelbench_sample.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <regex>

#include "report/kernelbench_timing_stats.hpp"

namespace kbv {
namespace {

using J = nlohmann::ordered_json;

// KernelBench's name of an exception, "<module>.<class>" (its get_error_name), read from the
// "<Class>: <message>" kbv's reasons carry; "" when the reason names none. A bare class is a
// builtin's, as KernelBench writes "builtins.RuntimeError".
std::string error_name(const std::string& reason) {
  static const std::regex named(R"((?:^|[\s(:'"])((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Interrupt|Exit))(?::|$))");
  std::smatch m;
  if (!std::regex_search(reason, m, named)) return "";
  std::string name = m[1];
  return name.find('.') == std::string::npos ? "builtins." + name : name;
}

// A failure KernelBench's own evaluation would have caught at its last level: a CUDA error is
// "not runnable code" there (compiled false, cuda_error); anything else that ends the process
// or the harness (a crash, a hang, a forged message) is its other_error (compiled false too).
bool is_cuda_error(const Verdict& v) {
  return v.outcome == Outcome::runtime_error && v.reason.find("CUDA error") != std::string::npos;
}
bool is_other_error(const Verdict& v) {
  return v.outcome == Outcome::timeout || v.outcome == Outcome::crashed || v.outcome == Outcome::protocol_violation;
}

// KernelBench's correctness_issue for a mismatch: its two words, the details stay in kbv_reason.
std::string correctness_issue(const Verdict& v) {
  static const std::regex shape(R"(output \d+: shape (\[[^\]]*\]) expected (\[[^\]]*\]))");
  std::smatch m;
  if (std::regex_search(v.reason, m, shape)) return fmt::format("Output shape mismatch: Expected {}, got {}", m[2].str(), m[1].str());
  return "Output mismatch";
}

// KernelBench's metadata keys, in the order its eval writes them.
void add_kernelbench_keys(const Verdict& v, J& m) {
  m["hardware"] = v.device.name;
  m["device"] = kernelbench_device(v.device);
  const std::string name = error_name(v.reason);
  if (v.outcome == Outcome::compile_error) {
    m["compilation_error_name"] = name.empty() ? "builtins.RuntimeError" : name;  // load_inline raises RuntimeError
    m["compilation_error"] = v.reason;
  } else if (is_cuda_error(v)) {
    m["cuda_error"] = "CUDA Error: " + v.reason;
    m["cuda_error_name"] = name.empty() ? "builtins.RuntimeError" : name;
  } else if (v.outcome == Outcome::runtime_error) {
    m["runtime_error"] = v.reason;
    m["runtime_error_name"] = name.empty() ? "builtins.RuntimeError" : name;
  } else if (is_other_error(v)) {
    m["other_error"] = "error: " + v.reason;
    m["other_error_name"] = v.outcome == Outcome::timeout ? "builtins.TimeoutError"
                            : !name.empty()                ? name
                                                           : fmt::format("kbv.{}", outcome_name(v.outcome));
  }
  if (v.outcome == Outcome::incorrect) {
    // KernelBench keeps max and mean |output - reference| of each failing trial as "%.6f"
    // strings; kbv's trials are its distributions (standard: KernelBench's five seeds).
    J max_diffs = J::array(), avg_diffs = J::array();
    bool all_avg = true;
    if (v.correctness)
      for (const auto& d : v.correctness->distributions)
        if (d.status == DistributionStatus::fail) {
          max_diffs.push_back(fmt::format("{:.6f}", d.max_abs_err));
          if (d.mean_abs_err) avg_diffs.push_back(fmt::format("{:.6f}", *d.mean_abs_err));
          else all_avg = false;
        }
    if (!max_diffs.empty()) m["max_difference"] = max_diffs;
    if (!max_diffs.empty() && all_avg) m["avg_difference"] = avg_diffs;
    m["correctness_issue"] = correctness_issue(v);
  }
  // "(passed / run)", set by KernelBench only when every trial ran to a comparison.
  if (v.correctness && (v.outcome == Outcome::correct || v.outcome == Outcome::incorrect)) {
    int passed = 0, run = 0;
    for (const auto& d : v.correctness->distributions) {
      passed += d.status == DistributionStatus::pass;
      run += d.status != DistributionStatus::skipped;
    }
    m["correctness_trials"] = fmt::format("({} / {})", passed, run);
  }
}

void add_kbv_keys(const VerdictRecord& r, J& m) {
  const auto& v = r.verdict;
  m["kbv_outcome"] = std::string(outcome_name(v.outcome));
  m["kbv_reason"] = v.reason;
  m["kbv_stage"] = v.stage;
  m["kbv_protocol"] = v.protocol;
  m["kbv_protocol_version"] = v.protocol_version;
  m["kbv_precision"] = v.precision;
  if (const auto* cand = verdict_series(v, "candidate")) {
    // Unrounded: KernelBench's runtime keeps 3 significant digits only.
    m["kbv_runtime_mean_ms"] =
        cand->samples_ms.empty() ? cand->mean_ms : samples_mean(cand->samples_ms);
    m["kbv_runtime_median_ms"] = cand->median_ms;
  }
  std::string headline = verdict_headline_baseline(v);
  m["kbv_baseline"] = headline;
  if (const auto* base = verdict_series(v, headline)) m["kbv_baseline_runtime"] = base->median_ms;
  if (const auto* sp = verdict_speedup(v, headline)) {
    m["kbv_speedup"] = sp->median;
    m["kbv_speedup_ci"] = {sp->ci_low, sp->ci_high};
    m["kbv_speedup_compare"] = sp->compare;
  }
  if (v.timing) {
    J all = J::object();
    for (const auto& sp : v.timing->speedups) all[sp.baseline] = sp.median;
    m["kbv_speedups"] = all;
    m["kbv_timing_clock"] = v.timing->clock;
  }
  if (v.memory) {
    m["kbv_peak_device_bytes"] = {{"candidate", v.memory->candidate.peak_device_bytes},
                                  {"baseline", v.memory->baseline.peak_device_bytes}};
    m["kbv_peak_allocated_bytes"] = {{"candidate", v.memory->candidate.peak_allocated_bytes},
                                     {"baseline", v.memory->baseline.peak_allocated_bytes}};
  }
  m["kbv_custom_kernel"] = v.custom_kernel;
  m["kbv_flags"] = J::array();
  for (const auto& f : v.flags)
    m["kbv_flags"].push_back(J{{"name", f.name}, {"evidence", f.evidence}});
  m["kbv_candidate_path"] = r.sample.candidate_path;
  m["kbv_candidate_sha256"] = v.candidate.sha256;
  m["kbv_problem_name"] = v.problem.name;
  m["kbv_level"] = r.sample.level;
  m["kbv_version"] = v.provenance.kbv_version;
  m["kbv_git_commit"] = v.provenance.git_commit;
}

}  // namespace

bool kernelbench_compiled(const Verdict& v) {
  return v.outcome == Outcome::correct || v.outcome == Outcome::incorrect ||
         (v.outcome == Outcome::runtime_error && !is_cuda_error(v));
}

bool kernelbench_has_row(const Verdict& v) {
  return v.outcome != Outcome::skipped && v.outcome != Outcome::internal_error &&
         v.outcome != Outcome::problem_error;
}

J kernelbench_metadata(const VerdictRecord& r) {
  J m = J::object();
  add_kernelbench_keys(r.verdict, m);
  add_kbv_keys(r, m);
  return m;
}

J kernelbench_sample(const VerdictRecord& r) {
  const auto& v = r.verdict;
  J s;
  s["sample_id"] = r.sample.sample_id;
  s["compiled"] = kernelbench_compiled(v);
  s["correctness"] = v.outcome == Outcome::correct;
  s["metadata"] = kernelbench_metadata(r);
  // KernelBench times only correct samples; its runtime is runtime_stats["mean"].
  const auto* cand = v.outcome == Outcome::correct ? verdict_series(v, "candidate") : nullptr;
  J stats = cand ? kernelbench_runtime_stats(*cand, v.device) : J::object();
  s["runtime"] = cand ? stats["mean"].get<double>() : -1.0;
  s["runtime_stats"] = std::move(stats);
  return s;
}

J kernelbench_eval_results(const std::vector<const VerdictRecord*>& records) {
  std::map<int, std::vector<const VerdictRecord*>> by_problem;
  for (const auto* r : records)
    if (kernelbench_has_row(r->verdict)) by_problem[r->sample.problem_id].push_back(r);
  J out = J::object();
  for (auto& [pid, rs] : by_problem) {
    std::sort(rs.begin(), rs.end(), [](const VerdictRecord* a, const VerdictRecord* b) {
      return a->sample.sample_id < b->sample.sample_id;
    });
    J list = J::array();
    for (const auto* r : rs) list.push_back(kernelbench_sample(*r));
    out[std::to_string(pid)] = std::move(list);
  }
  return out;
}

}  // namespace kbv
