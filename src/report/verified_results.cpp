#include "report/verified_results.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "report/kernelbench_sample.hpp"
#include "report/kernelbench_timing_stats.hpp"

namespace kbv {
namespace {

using J = nlohmann::ordered_json;

J keyed_by_problem_and_sample(const std::vector<const VerdictRecord*>& records,
                              const std::function<J(const VerdictRecord&)>& entry) {
  std::vector<const VerdictRecord*> rows;
  for (const auto* r : records)
    if (kernelbench_has_row(r->verdict)) rows.push_back(r);
  std::sort(rows.begin(), rows.end(), [](const VerdictRecord* a, const VerdictRecord* b) {
    return std::pair(a->sample.problem_id, a->sample.sample_id) <
           std::pair(b->sample.problem_id, b->sample.sample_id);
  });
  J out = J::object();
  for (const auto* r : rows)
    out[fmt::format("{}_{}", r->sample.problem_id, r->sample.sample_id)] = entry(*r);
  return out;
}

}  // namespace

std::string verified_config_name(const std::string& distribution) {
  if (distribution.size() >= 2 && distribution[0] == 'D' && distribution[1] >= '1' &&
      distribution[1] <= '4' && (distribution.size() == 2 || distribution[2] == '_'))
    return fmt::format("config_{}", distribution[1]);
  return "";
}

J verified_sample(const VerdictRecord& r) {
  J s = kernelbench_sample(r);
  const auto& v = r.verdict;
  // Measured (and meaningful) for a correct sample only.
  bool measured = v.outcome == Outcome::correct && v.memory;
  s["peak_memory"] = measured ? v.memory->candidate.peak_allocated_bytes : std::int64_t{-1};
  return s;
}

J verified_hidden_sample(const VerdictRecord& r) {
  const auto& v = r.verdict;
  J m = J::object();
  m["hardware"] = v.device.name;
  m["device"] = kernelbench_device(v.device);
  if (v.outcome == Outcome::compile_error) {
    const J kb = kernelbench_metadata(r);  // the same name as eval_results.json's
    m["compilation_error_name"] = kb.at("compilation_error_name");
    m["compilation_error"] = v.reason;
  }
  if (v.outcome == Outcome::runtime_error || v.outcome == Outcome::timeout ||
      v.outcome == Outcome::crashed || v.outcome == Outcome::protocol_violation)
    m["hidden_runtime_error"] = v.reason;
  if (v.correctness && (v.outcome == Outcome::correct || v.outcome == Outcome::incorrect)) {
    int passed = 0, run = 0;
    J failed = J::array(), diffs = J::array();
    // A hidden-test file's own configurations (kbv run --hidden-tests) are the hidden run when the
    // verdict has them; otherwise verified's four distributions stand for them.
    bool from_file = false;
    for (const auto& d : v.correctness->distributions) from_file = from_file || d.kind == "hidden_file";
    for (const auto& d : v.correctness->distributions) {
      std::string config = from_file ? (d.kind == "hidden_file" ? "config_" + d.name.substr(d.name.rfind('_') + 1) : "")
                                     : verified_config_name(d.name);
      if (config.empty() || d.status == DistributionStatus::skipped) continue;
      ++run;
      if (d.status == DistributionStatus::pass)
        ++passed;
      else {
        failed.push_back(config);
        diffs.push_back(fmt::format("{:.6f}", d.max_abs_err));
      }
    }
    m["hidden_correctness_trials"] = fmt::format("({} / {})", passed, run);
    m["hidden_failed_configs"] = failed;
    if (!diffs.empty()) m["max_difference"] = diffs;
    if (v.outcome == Outcome::incorrect) m["correctness_issue"] = v.reason;
  }
  // kbv's own keys, as in eval_results.json.
  const J all = kernelbench_metadata(r);
  for (const auto& [k, val] : all.items())
    if (k.rfind("kbv_", 0) == 0) m[k] = val;

  J s;
  s["sample_id"] = r.sample.sample_id;
  s["compiled"] = kernelbench_compiled(v);
  s["correctness"] = v.outcome == Outcome::correct;
  s["metadata"] = std::move(m);
  s["runtime"] = -1.0;  // the hidden run measures no performance
  s["runtime_stats"] = J::object();
  return s;
}

J verified_eval_results(const std::vector<const VerdictRecord*>& records) {
  return keyed_by_problem_and_sample(records, verified_sample);
}

J verified_hidden_results(const std::vector<const VerdictRecord*>& records) {
  return keyed_by_problem_and_sample(records, verified_hidden_sample);
}

}  // namespace kbv
