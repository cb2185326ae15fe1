#pragma once
// The result fields: every per-verdict value the store, the CSV, the JSON report and the docs
// show, defined ONCE here as {name, SQL type, unit, description, extractor}. The SQLite
// `verdicts` columns, the CSV header and docs/store.md's column table are all generated from
// result_fields(); adding a field here (and bumping kStoreSchemaVersion) adds it everywhere.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/verdict.hpp"

namespace kbv {

// Where a verdict belongs in a run folder: runs/{run_name}/level_{L}_problem_{P}_sample_{S}_kernel.py
struct SampleRef {
  std::string run_name;        // the run (usually one model's generations): the runs/{run} folder name
  std::string candidate_path;  // as the orchestrator found it
  int level = 0;
  int problem_id = -1;
  int sample_id = 0;
};

// One stored verdict with its place and bookkeeping.
struct VerdictRecord {
  SampleRef sample;
  Verdict verdict;
  std::int64_t run_id = 0;  // the `runs` row (kbv run invocation) that wrote it last; 0 if none
  std::string created_at;   // UTC ISO 8601
  std::string updated_at;
};

enum class FieldType { integer, real, text };
using FieldValue = std::variant<std::monostate, std::int64_t, double, std::string>;  // monostate = NULL

struct ResultField {
  std::string name;
  FieldType type = FieldType::text;
  std::string unit;         // "ms", "bytes", "s", "x" (ratio), "0/1", or "" for none
  std::string description;  // one line
  bool key = false;         // part of the natural key (UNIQUE); never NULL
  std::function<FieldValue(const VerdictRecord&)> extract;
};

// All fields, in column order.
const std::vector<ResultField>& result_fields();
const ResultField& result_field(std::string_view name);  // throws std::out_of_range

std::string_view field_type_sql(FieldType t);  // INTEGER / REAL / TEXT
std::string field_value_text(const FieldValue& v);  // "" for NULL; reals in shortest round-trip form
nlohmann::json field_value_json(const FieldValue& v);  // null for NULL
// Every field of one record as a JSON object (field name -> value), in field order.
nlohmann::ordered_json record_fields_json(const VerdictRecord& r);
// The Markdown table of the fields (name | type | unit | description | key), as in docs/store.md.
std::string result_fields_markdown();

// Helpers the fields (and the aggregates) share, so every consumer reads a verdict one way.

// "kind:name:capability:memory_bytes", e.g. "cuda:NVIDIA H200:9.0:150754820096". The driver is
// provenance, not identity: a driver update does not invalidate stored verdicts.
std::string device_fingerprint(const DeviceInfo& d);
// The build succeeded: not a compile_error, and not a timeout/crash before the build finished.
bool verdict_compiled(const Verdict& v);
// The series the protocol's headline speedup is measured against: timing.primary_baseline,
// else the protocol's own baseline; "" when neither is known.
std::string verdict_headline_baseline(const Verdict& v);
const SpeedupResult* verdict_speedup(const Verdict& v, std::string_view baseline);  // nullptr if not timed
const SeriesStats* verdict_series(const Verdict& v, std::string_view name);
// The baselines a verdict may carry a speedup against, in column order.
const std::vector<std::string>& known_baselines();

}  // namespace kbv
