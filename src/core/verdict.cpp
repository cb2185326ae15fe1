#include "core/verdict.hpp"

namespace kbv {

// Outcomes by the one name table in outcome.cpp; an unknown name is an error, never a guess.
void to_json(nlohmann::json& j, const Outcome& o) { j = std::string(outcome_name(o)); }
void from_json(const nlohmann::json& j, Outcome& o) {
  auto parsed = outcome_from_name(j.get<std::string>());
  if (!parsed) throw std::runtime_error("unknown outcome '" + j.get<std::string>() + "'");
  o = *parsed;
}
NLOHMANN_JSON_SERIALIZE_ENUM(DistributionStatus, {
                                                     {DistributionStatus::pass, "pass"},
                                                     {DistributionStatus::fail, "fail"},
                                                     {DistributionStatus::skipped, "skipped"},
                                                 })

std::string_view distribution_status_name(DistributionStatus s) {
  switch (s) {
    case DistributionStatus::pass: return "pass";
    case DistributionStatus::fail: return "fail";
    case DistributionStatus::skipped: return "skipped";
  }
  return "unknown";
}

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(FileRef, path, sha256)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(DeviceInfo, kind, name, capability, l2_bytes,
                                                memory_bytes, driver, peak_dram_bytes_per_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Provenance, kbv_version, git_commit, torch_version,
                                                cuda_version, python_version, hostname, started_at,
                                                argv)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ExtensionBuild, requested_name, unique_name,
                                                build_dir, seconds, cuda, extension_h_left_out,
                                                lean_prelude, lean_binding)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(BuildResult, seconds, build_dir, log_path, log_tail,
                                                extensions)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(NumericsCheck, factor, candidate_max_abs_err, eager_max_abs_err,
                                                candidate_rms_err, eager_rms_err, within, note)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CorrectnessResult, atol, rtol, distributions,
                                                skipped)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(SeriesStats, name, samples, median_ms, q1_ms, q3_ms,
                                                min_ms, max_ms, mean_ms, samples_ms)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(SpeedupResult, baseline, median, ci_low, ci_high,
                                                compare)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Flag, name, evidence)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(VerdictLimits, compile_timeout_seconds, run_timeout_seconds)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(MemoryResult, method, candidate, baseline,
                                                ratio_allocated, ratio_device, ratio_footprint)

namespace {

template <typename T>
void put_optional(nlohmann::json& j, const char* key, const std::optional<T>& value) {
  if (value) j[key] = *value;
}

template <typename T>
void get_optional(const nlohmann::json& j, const char* key, std::optional<T>& value) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    value.reset();
    return;
  }
  value = it->template get<T>();
}

template <typename T>
void get_field(const nlohmann::json& j, const char* key, T& value) {
  auto it = j.find(key);
  if (it != j.end() && !it->is_null()) it->get_to(value);
}

}  // namespace

void to_json(nlohmann::json& j, const ProblemInfo& p) {
  j = nlohmann::json{{"path", p.path}, {"sha256", p.sha256}, {"level", p.level}, {"id", p.id}, {"name", p.name}, {"size", p.size}};
  put_optional(j, "hidden_tests", p.hidden_tests);
}

void from_json(const nlohmann::json& j, ProblemInfo& p) {
  get_field(j, "path", p.path);
  get_field(j, "sha256", p.sha256);
  get_field(j, "level", p.level);
  get_field(j, "id", p.id);
  get_field(j, "name", p.name);
  get_field(j, "size", p.size);
  get_optional(j, "hidden_tests", p.hidden_tests);
}

void to_json(nlohmann::json& j, const TimingResult& t) {
  j = nlohmann::json{{"clock", t.clock},           {"primary_baseline", t.primary_baseline}, {"l2_flush", t.l2_flush},
                     {"l2_flush_bytes", t.l2_flush_bytes}, {"input_sets", t.input_sets},   {"warmup_rounds", t.warmup_rounds},
                     {"rounds", t.rounds},         {"seconds", t.seconds},                   {"stop_reason", t.stop_reason},
                     {"target_rel_ci", t.target_rel_ci}, {"series", t.series},               {"speedups", t.speedups},
                     {"hop_ms", t.hop_ms},         {"hop_samples", t.hop_samples},           {"gated", t.gated},
                     {"checked_calls", t.checked_calls}, {"floor_samples", t.floor_samples}};
  put_optional(j, "torch_compile_seconds", t.torch_compile_seconds);
  j["sandbox_frozen"] = t.sandbox_frozen;
  put_optional(j, "idle_hop_ms", t.idle_hop_ms);
  put_optional(j, "busy_hop_share", t.busy_hop_share);
  put_optional(j, "cpu_wait_share", t.cpu_wait_share);
  if (!t.rounds_of.empty()) j["rounds_of"] = t.rounds_of;
}

void from_json(const nlohmann::json& j, TimingResult& t) {
  get_field(j, "clock", t.clock);
  get_field(j, "primary_baseline", t.primary_baseline);
  get_field(j, "l2_flush", t.l2_flush);
  get_field(j, "l2_flush_bytes", t.l2_flush_bytes);
  get_field(j, "input_sets", t.input_sets);
  get_field(j, "warmup_rounds", t.warmup_rounds);
  get_field(j, "rounds", t.rounds);
  get_field(j, "seconds", t.seconds);
  get_field(j, "stop_reason", t.stop_reason);
  get_field(j, "target_rel_ci", t.target_rel_ci);
  get_field(j, "series", t.series);
  get_field(j, "speedups", t.speedups);
  get_field(j, "hop_ms", t.hop_ms);
  get_field(j, "hop_samples", t.hop_samples);
  get_field(j, "gated", t.gated);
  get_field(j, "checked_calls", t.checked_calls);
  get_field(j, "floor_samples", t.floor_samples);
  get_optional(j, "torch_compile_seconds", t.torch_compile_seconds);
  get_field(j, "sandbox_frozen", t.sandbox_frozen);
  get_optional(j, "idle_hop_ms", t.idle_hop_ms);
  get_optional(j, "busy_hop_share", t.busy_hop_share);
  get_optional(j, "cpu_wait_share", t.cpu_wait_share);
  get_field(j, "rounds_of", t.rounds_of);
}

void to_json(nlohmann::json& j, const MemoryUse& m) {
  j = nlohmann::json{{"peak_allocated_bytes", m.peak_allocated_bytes},
                     {"peak_device_bytes", m.peak_device_bytes},
                     {"resident_bytes", m.resident_bytes}};
  put_optional(j, "process_bytes", m.process_bytes);
}

void from_json(const nlohmann::json& j, MemoryUse& m) {
  get_field(j, "peak_allocated_bytes", m.peak_allocated_bytes);
  get_field(j, "peak_device_bytes", m.peak_device_bytes);
  get_field(j, "resident_bytes", m.resident_bytes);
  get_optional(j, "process_bytes", m.process_bytes);
}

void to_json(nlohmann::json& j, const DistributionResult& d) {
  j = nlohmann::json{{"name", d.name},       {"kind", d.kind},           {"status", d.status},
                     {"reason", d.reason},   {"max_abs_err", d.max_abs_err}, {"max_rel_err", d.max_rel_err},
                     {"mismatched", d.mismatched}, {"numel", d.numel}, {"trivial_pass", d.trivial_pass}};
  put_optional(j, "numerics", d.numerics);
  put_optional(j, "mean_abs_err", d.mean_abs_err);
}

void from_json(const nlohmann::json& j, DistributionResult& d) {
  get_field(j, "name", d.name);
  get_field(j, "kind", d.kind);
  get_field(j, "status", d.status);
  get_field(j, "reason", d.reason);
  get_field(j, "max_abs_err", d.max_abs_err);
  get_field(j, "max_rel_err", d.max_rel_err);
  get_field(j, "mismatched", d.mismatched);
  get_field(j, "numel", d.numel);
  get_field(j, "trivial_pass", d.trivial_pass);
  get_optional(j, "numerics", d.numerics);
  get_optional(j, "mean_abs_err", d.mean_abs_err);
}

nlohmann::json device_to_json(const DeviceInfo& d) { return d; }
DeviceInfo device_from_json(const nlohmann::json& j) { return j.get<DeviceInfo>(); }

void to_json(nlohmann::json& j, const Verdict& v) {
  j = nlohmann::json{
      {"schema", v.schema},
      {"protocol", v.protocol},
      {"protocol_version", v.protocol_version},
      {"precision", v.precision},
      {"outcome", v.outcome},
      {"reason", v.reason},
      {"stage", v.stage},
      {"problem", v.problem},
      {"candidate", v.candidate},
      {"device", v.device},
      {"provenance", v.provenance},
      {"custom_kernel", v.custom_kernel},
      {"flags", v.flags},
      {"warnings", v.warnings},
      {"output_tail", v.output_tail},
      {"wall_seconds", v.wall_seconds},
      {"stage_seconds", v.stage_seconds},
  };
  if (!v.isolation.is_null()) j["isolation"] = v.isolation;
  put_optional(j, "build", v.build);
  put_optional(j, "correctness", v.correctness);
  put_optional(j, "timing", v.timing);
  put_optional(j, "memory", v.memory);
  put_optional(j, "limits", v.limits);
}

void from_json(const nlohmann::json& j, Verdict& v) {
  get_field(j, "schema", v.schema);
  get_field(j, "protocol", v.protocol);
  get_field(j, "protocol_version", v.protocol_version);
  get_field(j, "precision", v.precision);
  get_field(j, "outcome", v.outcome);
  get_field(j, "reason", v.reason);
  get_field(j, "stage", v.stage);
  get_field(j, "problem", v.problem);
  get_field(j, "candidate", v.candidate);
  get_field(j, "device", v.device);
  get_field(j, "provenance", v.provenance);
  get_field(j, "custom_kernel", v.custom_kernel);
  get_field(j, "flags", v.flags);
  get_field(j, "warnings", v.warnings);
  get_field(j, "output_tail", v.output_tail);
  get_field(j, "wall_seconds", v.wall_seconds);
  get_field(j, "stage_seconds", v.stage_seconds);
  if (j.contains("isolation")) v.isolation = j["isolation"];
  get_optional(j, "build", v.build);
  get_optional(j, "correctness", v.correctness);
  get_optional(j, "timing", v.timing);
  get_optional(j, "memory", v.memory);
  get_optional(j, "limits", v.limits);
}

}  // namespace kbv
