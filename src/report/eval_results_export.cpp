#include "report/eval_results_export.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/errors.hpp"
#include "report/aggregates.hpp"

namespace kbv {
namespace fs = std::filesystem;
namespace {

using J = nlohmann::ordered_json;

double population_std(const std::vector<double>& xs) {
  if (xs.empty()) return 0;
  double mean = 0;
  for (double x : xs) mean += x;
  mean /= static_cast<double>(xs.size());
  double ss = 0;
  for (double x : xs) ss += (x - mean) * (x - mean);
  return std::sqrt(ss / static_cast<double>(xs.size()));
}

}  // namespace

J eval_results_sample(const VerdictRecord& r) {
  const auto& v = r.verdict;
  J s;
  s["sample_id"] = r.sample.sample_id;
  s["compiled"] = verdict_compiled(v);
  s["correctness"] = v.outcome == Outcome::correct;
  const auto* cand = verdict_series(v, "candidate");
  s["runtime"] = cand ? cand->median_ms : -1.0;
  s["runtime_stats"] = J::object();
  if (cand)
    s["runtime_stats"] = J{{"mean", cand->mean_ms},
                           {"std", population_std(cand->samples_ms)},
                           {"min", cand->min_ms},
                           {"max", cand->max_ms},
                           {"num_trials", cand->samples}};

  J m;
  m["hardware"] = v.device.name;
  m["device"] = v.device.kind;
  if (v.correctness) {
    int passed = 0, run = 0;
    for (const auto& d : v.correctness->distributions) {
      passed += d.status == DistributionStatus::pass;
      run += d.status != DistributionStatus::skipped;
    }
    m["correctness_trials"] = fmt::format("({} / {})", passed, run);
  }
  if (v.outcome == Outcome::compile_error) m["compilation_error"] = v.reason;
  if (v.outcome == Outcome::runtime_error || v.outcome == Outcome::timeout || v.outcome == Outcome::crashed)
    m["runtime_error"] = v.reason;
  if (v.outcome == Outcome::incorrect) m["correctness_issue"] = v.reason;
  m["kbv_outcome"] = std::string(outcome_name(v.outcome));
  m["kbv_reason"] = v.reason;
  m["kbv_stage"] = v.stage;
  m["kbv_protocol"] = v.protocol;
  m["kbv_protocol_version"] = v.protocol_version;
  m["kbv_precision"] = v.precision;
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
  for (const auto& f : v.flags) m["kbv_flags"].push_back(J{{"name", f.name}, {"evidence", f.evidence}});
  m["kbv_candidate_path"] = r.sample.candidate_path;
  m["kbv_candidate_sha256"] = v.candidate.sha256;
  m["kbv_problem_name"] = v.problem.name;
  m["kbv_level"] = r.sample.level;
  m["kbv_version"] = v.provenance.kbv_version;
  m["kbv_git_commit"] = v.provenance.git_commit;
  s["metadata"] = m;
  return s;
}

J eval_results_json(const std::vector<const VerdictRecord*>& records) {
  std::map<int, std::vector<const VerdictRecord*>> by_problem;
  for (const auto* r : records) by_problem[r->sample.problem_id].push_back(r);
  J out = J::object();
  for (auto& [pid, rs] : by_problem) {
    std::sort(rs.begin(), rs.end(), [](const VerdictRecord* a, const VerdictRecord* b) {
      return a->sample.sample_id < b->sample.sample_id;
    });
    J list = J::array();
    for (const auto* r : rs) list.push_back(eval_results_sample(*r));
    out[std::to_string(pid)] = std::move(list);
  }
  return out;
}

std::string run_folder_name(const std::string& label) {
  std::string out;
  for (char c : label) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') ? c : '_';
  if (out.empty() || out == "." || out == "..") out = "run_" + out;
  return out;
}

ExportResult export_eval_results(const std::vector<VerdictRecord>& records, const std::string& out_dir,
                                 const std::string& protocol) {
  ExportResult result;
  auto present = protocols_strictest_first(records);
  if (present.empty()) throw UsageError("the results DB holds no verdicts; nothing to export");
  result.protocol = protocol.empty() ? present.front() : protocol;
  if (std::find(present.begin(), present.end(), result.protocol) == present.end())
    throw UsageError(fmt::format("no verdicts under protocol '{}'; present: {}", result.protocol, fmt::join(present, ", ")));
  for (const auto& r : records)
    if (r.verdict.protocol == result.protocol) result.protocol_version = std::max(result.protocol_version, r.verdict.protocol_version);

  auto labels = run_labels(records);
  // (folder, level) -> (sample id, problem id) -> the latest record of that sample
  std::map<std::pair<std::string, int>, std::map<std::pair<int, int>, const VerdictRecord*>> files;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    if (r.verdict.protocol != result.protocol || r.verdict.protocol_version != result.protocol_version) continue;
    if (r.verdict.outcome == Outcome::internal_error) {
      ++result.internal_errors;
      continue;
    }
    auto& slot = files[{run_folder_name(labels[i]), r.sample.level}][{r.sample.problem_id, r.sample.sample_id}];
    if (!slot || slot->updated_at <= r.updated_at) slot = &r;
  }
  for (const auto& [where, samples] : files) {
    fs::path dir = fs::path(out_dir) / where.first / fmt::format("level{}", where.second);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw UsageError(fmt::format("cannot create '{}': {}", dir.string(), ec.message()));
    std::vector<const VerdictRecord*> rs;
    for (const auto& [k, r] : samples) rs.push_back(r);
    fs::path file = dir / "eval_results.json";
    std::ofstream out(file);
    if (!out) throw UsageError(fmt::format("cannot write '{}'", file.string()));
    out << eval_results_json(rs).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    if (!out) throw UsageError(fmt::format("cannot write '{}' (disk full?)", file.string()));
    result.files.push_back(file.string());
  }
  return result;
}

}  // namespace kbv
