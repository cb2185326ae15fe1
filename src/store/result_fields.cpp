#include "store/result_fields.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "core/protocol.hpp"

namespace kbv {
namespace {

using R = const VerdictRecord&;

FieldValue opt_real(bool present, double value) { return present ? FieldValue(value) : FieldValue(); }
FieldValue opt_int(bool present, std::int64_t value) { return present ? FieldValue(value) : FieldValue(); }

ResultField text(std::string name, std::string description, std::function<std::string(R)> get, bool key = false) {
  return {std::move(name), FieldType::text, "", std::move(description), key,
          [get = std::move(get)](R r) { return FieldValue(get(r)); }};
}

ResultField integer(std::string name, std::string unit, std::string description, std::function<std::int64_t(R)> get,
                    bool key = false) {
  return {std::move(name), FieldType::integer, std::move(unit), std::move(description), key,
          [get = std::move(get)](R r) { return FieldValue(get(r)); }};
}

ResultField nullable(std::string name, FieldType type, std::string unit, std::string description,
                     std::function<FieldValue(R)> get) {
  return {std::move(name), type, std::move(unit), std::move(description), false, std::move(get)};
}

// Speedup fields against one baseline (`prefix` names them; `which` picks the baseline).
void add_speedup_fields(std::vector<ResultField>& f, const std::string& prefix, const std::string& what,
                        std::function<std::string(const Verdict&)> which) {
  auto get = [which](R r) { return verdict_speedup(r.verdict, which(r.verdict)); };
  f.push_back(nullable(prefix, FieldType::real, "x",
                       "median of per-round baseline/candidate time ratios vs " + what + "; >1 is faster",
                       [get](R r) { auto* s = get(r); return opt_real(s, s ? s->median : 0); }));
  f.push_back(nullable(prefix + "_ci_low", FieldType::real, "x", "lower end of its 95% confidence interval",
                       [get](R r) { auto* s = get(r); return opt_real(s, s ? s->ci_low : 0); }));
  f.push_back(nullable(prefix + "_ci_high", FieldType::real, "x", "upper end of its 95% confidence interval",
                       [get](R r) { auto* s = get(r); return opt_real(s, s ? s->ci_high : 0); }));
}

FieldValue series_median(const Verdict& v, std::string_view name) {
  const auto* s = verdict_series(v, name);
  return opt_real(s, s ? s->median_ms : 0);
}

std::vector<ResultField> make_fields() {
  std::vector<ResultField> f;
  // Where the verdict belongs and under which conditions: together the natural key.
  f.push_back(text("run_name", "the run (one model's generations): the runs/{run} folder", [](R r) { return r.sample.run_name; }, true));
  f.push_back(integer("level", "", "KernelBench level (from the candidate's file name)", [](R r) { return r.sample.level; }, true));
  f.push_back(integer("problem_id", "", "problem id within the level", [](R r) { return r.sample.problem_id; }, true));
  f.push_back(integer("sample_id", "", "sample number of this candidate for the problem", [](R r) { return r.sample.sample_id; }, true));
  f.push_back(text("problem_sha256", "SHA-256 of the problem file", [](R r) { return r.verdict.problem.sha256; }, true));
  f.push_back(text("candidate_sha256", "SHA-256 of the candidate file", [](R r) { return r.verdict.candidate.sha256; }, true));
  f.push_back(text("protocol", "standard / verified / strict", [](R r) { return r.verdict.protocol; }, true));
  f.push_back(integer("protocol_version", "", "version of the protocol's rules", [](R r) { return r.verdict.protocol_version; }, true));
  f.push_back(text("precision", "fp32 / bf16 / fp16", [](R r) { return r.verdict.precision; }, true));
  f.push_back(text("problem_size", "default, or small (KBV_SMALL shapes)", [](R r) { return r.verdict.problem.size; }, true));
  f.push_back(text("device_fingerprint", "kind:name:capability:memory_bytes of the device", [](R r) { return device_fingerprint(r.verdict.device); }, true));
  // What happened.
  f.push_back(text("problem_name", "problem name from {id}_{Name}.py", [](R r) { return r.verdict.problem.name; }));
  f.push_back(text("candidate_path", "candidate file as the run found it", [](R r) { return r.sample.candidate_path; }));
  f.push_back(text("device_name", "GPU (or CPU) model", [](R r) { return r.verdict.device.name; }));
  f.push_back(text("outcome", "correct / incorrect / compile_error / runtime_error / timeout / crashed / skipped / problem_error",
                   [](R r) { return std::string(outcome_name(r.verdict.outcome)); }));
  f.push_back(text("reason", "why it is not correct, one line; empty when correct", [](R r) { return r.verdict.reason; }));
  f.push_back(text("stage", "last stage the worker reached", [](R r) { return r.verdict.stage; }));
  f.push_back(integer("compiled", "0/1", "the candidate built and imported", [](R r) { return verdict_compiled(r.verdict) ? 1 : 0; }));
  f.push_back(integer("correct", "0/1", "outcome is correct", [](R r) { return r.verdict.outcome == Outcome::correct ? 1 : 0; }));
  f.push_back(integer("custom_kernel", "0/1", "a candidate extension was built and loaded (not a PyTorch-only rewrite)",
                      [](R r) { return r.verdict.custom_kernel ? 1 : 0; }));
  f.push_back(text("flags", "names of the verdict's flags as a JSON array (evidence: verdict_json)", [](R r) {
    auto names = nlohmann::json::array();
    for (const auto& flag : r.verdict.flags) names.push_back(flag.name);
    return names.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }));
  f.push_back(nullable("distributions_passed", FieldType::integer, "", "correctness distributions that passed",
                       [](R r) {
                         if (!r.verdict.correctness) return FieldValue();
                         std::int64_t n = 0;
                         for (const auto& d : r.verdict.correctness->distributions) n += d.status == DistributionStatus::pass;
                         return FieldValue(n);
                       }));
  f.push_back(nullable("distributions_run", FieldType::integer, "", "correctness distributions run (not skipped)",
                       [](R r) {
                         if (!r.verdict.correctness) return FieldValue();
                         std::int64_t n = 0;
                         for (const auto& d : r.verdict.correctness->distributions) n += d.status != DistributionStatus::skipped;
                         return FieldValue(n);
                       }));
  // Time.
  f.push_back(text("headline_baseline", "the protocol's baseline: eager_tf32_off (standard) or eager_tf32_on",
                   [](R r) { return verdict_headline_baseline(r.verdict); }));
  add_speedup_fields(f, "speedup", "the protocol's baseline", [](const Verdict& v) { return verdict_headline_baseline(v); });
  f.push_back(nullable("speedup_compare", FieldType::text, "", "FASTER / SLOWER / SAME / UNSURE (CI vs 1)",
                       [](R r) {
                         auto* s = verdict_speedup(r.verdict, verdict_headline_baseline(r.verdict));
                         return s ? FieldValue(s->compare) : FieldValue();
                       }));
  for (const auto& b : known_baselines())
    add_speedup_fields(f, "speedup_vs_" + b, b, [b](const Verdict&) { return b; });
  f.push_back(nullable("candidate_median_ms", FieldType::real, "ms", "median time of one candidate forward",
                       [](R r) { return series_median(r.verdict, "candidate"); }));
  f.push_back(nullable("baseline_median_ms", FieldType::real, "ms", "median time of one forward of the protocol's baseline",
                       [](R r) { return series_median(r.verdict, verdict_headline_baseline(r.verdict)); }));
  for (const auto& b : known_baselines())
    f.push_back(nullable(b + "_median_ms", FieldType::real, "ms", "median time of one forward of " + b,
                         [b](R r) { return series_median(r.verdict, b); }));
  f.push_back(nullable("timing_clock", FieldType::text, "", "cuda_events or cpu_steady_clock",
                       [](R r) { return r.verdict.timing ? FieldValue(r.verdict.timing->clock) : FieldValue(); }));
  f.push_back(nullable("timing_rounds", FieldType::integer, "", "timed rounds (one sample of every series each)",
                       [](R r) { return opt_int(r.verdict.timing.has_value(), r.verdict.timing ? r.verdict.timing->rounds : 0); }));
  f.push_back(nullable("timing_stop_reason", FieldType::text, "", "converged (CI within target) or budget",
                       [](R r) { return r.verdict.timing ? FieldValue(r.verdict.timing->stop_reason) : FieldValue(); }));
  // Memory (absent in standard and on the CPU).
  f.push_back(nullable("memory_method", FieldType::text, "", "how peak device memory was observed",
                       [](R r) { return r.verdict.memory ? FieldValue(r.verdict.memory->method) : FieldValue(); }));
  struct MemField {
    const char* name;
    const char* description;
    std::int64_t (*get)(const MemoryResult&);
  };
  static const MemField kMem[] = {
      {"candidate_peak_allocated_bytes", "candidate: caching-allocator peak during one forward", [](const MemoryResult& m) { return m.candidate.peak_allocated_bytes; }},
      {"candidate_peak_device_bytes", "candidate: peak of all device allocations during one forward", [](const MemoryResult& m) { return m.candidate.peak_device_bytes; }},
      {"candidate_resident_bytes", "candidate: device memory held between calls (tensors reachable from the model and its module globals)", [](const MemoryResult& m) { return m.candidate.resident_bytes; }},
      {"baseline_peak_allocated_bytes", "baseline: caching-allocator peak during one forward", [](const MemoryResult& m) { return m.baseline.peak_allocated_bytes; }},
      {"baseline_peak_device_bytes", "baseline: peak of all device allocations during one forward", [](const MemoryResult& m) { return m.baseline.peak_device_bytes; }},
      {"baseline_resident_bytes", "baseline: device memory held between calls (tensors reachable from the model and its module globals)", [](const MemoryResult& m) { return m.baseline.resident_bytes; }},
  };
  for (const auto& m : kMem) {
    auto get = m.get;
    f.push_back(nullable(m.name, FieldType::integer, "bytes", m.description,
                         [get](R r) { return r.verdict.memory ? FieldValue(get(*r.verdict.memory)) : FieldValue(); }));
  }
  // Cost and provenance (the full provenance is in verdict_json).
  f.push_back(nullable("build_seconds", FieldType::real, "s", "importing the candidate, extension builds included",
                       [](R r) { return opt_real(r.verdict.build.has_value(), r.verdict.build ? r.verdict.build->seconds : 0); }));
  f.push_back(nullable("wall_seconds", FieldType::real, "s", "the whole evaluation, worker start to exit",
                       [](R r) { return FieldValue(r.verdict.wall_seconds); }));
  f.push_back(text("kbv_version", "kbv version that produced the verdict", [](R r) { return r.verdict.provenance.kbv_version; }));
  f.push_back(text("git_commit", "kbv git commit", [](R r) { return r.verdict.provenance.git_commit; }));
  f.push_back(text("torch_version", "PyTorch version in the worker", [](R r) { return r.verdict.provenance.torch_version; }));
  f.push_back(text("cuda_version", "CUDA version PyTorch was built with", [](R r) { return r.verdict.provenance.cuda_version; }));
  f.push_back(text("started_at", "when the evaluation started (UTC, ISO 8601)", [](R r) { return r.verdict.provenance.started_at; }));
  return f;
}

}  // namespace

const std::vector<std::string>& known_baselines() {
  static const std::vector<std::string> k{std::string(baseline_name(BaselineKind::eager_tf32_off)),
                                          std::string(baseline_name(BaselineKind::eager_tf32_on)),
                                          std::string(baseline_name(BaselineKind::torch_compile))};
  return k;
}

const std::vector<ResultField>& result_fields() {
  static const std::vector<ResultField> fields = make_fields();
  return fields;
}

const ResultField& result_field(std::string_view name) {
  for (const auto& f : result_fields())
    if (f.name == name) return f;
  throw std::out_of_range("no result field named '" + std::string(name) + "'");
}

std::string_view field_type_sql(FieldType t) {
  switch (t) {
    case FieldType::integer: return "INTEGER";
    case FieldType::real: return "REAL";
    case FieldType::text: return "TEXT";
  }
  return "TEXT";
}

std::string field_value_text(const FieldValue& v) {
  if (std::holds_alternative<std::int64_t>(v)) return std::to_string(std::get<std::int64_t>(v));
  if (std::holds_alternative<double>(v)) return fmt::format("{}", std::get<double>(v));
  if (std::holds_alternative<std::string>(v)) return std::get<std::string>(v);
  return {};
}

nlohmann::json field_value_json(const FieldValue& v) {
  if (std::holds_alternative<std::int64_t>(v)) return std::get<std::int64_t>(v);
  if (std::holds_alternative<double>(v)) return std::get<double>(v);
  if (std::holds_alternative<std::string>(v)) return std::get<std::string>(v);
  return nullptr;
}

nlohmann::ordered_json record_fields_json(const VerdictRecord& r) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& f : result_fields()) {
    auto v = f.extract(r);
    if (std::holds_alternative<std::int64_t>(v)) j[f.name] = std::get<std::int64_t>(v);
    else if (std::holds_alternative<double>(v)) j[f.name] = std::get<double>(v);
    else if (std::holds_alternative<std::string>(v)) j[f.name] = std::get<std::string>(v);
    else j[f.name] = nullptr;
  }
  return j;
}

std::string result_fields_markdown() {
  std::string out = "| field | type | unit | description | key |\n|---|---|---|---|---|\n";
  for (const auto& f : result_fields())
    out += fmt::format("| `{}` | {} | {} | {} | {} |\n", f.name, field_type_sql(f.type), f.unit, f.description,
                       f.key ? "yes" : "");
  return out;
}

std::string device_fingerprint(const DeviceInfo& d) {
  return fmt::format("{}:{}:{}:{}", d.kind, d.name, d.capability, d.memory_bytes);
}

bool verdict_compiled(const Verdict& v) {
  switch (v.outcome) {
    case Outcome::compile_error:
    case Outcome::skipped:
    case Outcome::problem_error: return false;
    case Outcome::timeout:
    case Outcome::crashed:
      return !(v.stage.empty() || v.stage == "setup" || v.stage == "load_problem" || v.stage == "build");
    default: return true;
  }
}

std::string verdict_headline_baseline(const Verdict& v) {
  if (v.timing && !v.timing->primary_baseline.empty()) return v.timing->primary_baseline;
  try {
    return std::string(baseline_name(protocol_by_name(v.protocol).baseline));
  } catch (const std::exception&) {
    return {};
  }
}

const SpeedupResult* verdict_speedup(const Verdict& v, std::string_view baseline) {
  if (!v.timing || baseline.empty()) return nullptr;
  for (const auto& s : v.timing->speedups)
    if (s.baseline == baseline) return &s;
  return nullptr;
}

const SeriesStats* verdict_series(const Verdict& v, std::string_view name) {
  if (!v.timing || name.empty()) return nullptr;
  for (const auto& s : v.timing->series)
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace kbv
