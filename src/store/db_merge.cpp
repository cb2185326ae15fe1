#include "store/db_merge.hpp"

#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "core/outcome.hpp"
#include "core/utc_time.hpp"
#include "store/result_fields.hpp"
#include "store/result_store.hpp"
#include "store/sqlite.hpp"

namespace fs = std::filesystem;

namespace kbv {
namespace {

std::string joined(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

std::vector<std::string> prefixed(const std::vector<std::string>& names, const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& n : names) out.push_back(prefix + n);
  return out;
}

// Every column of `verdicts` but its id, in the store's order.
std::vector<std::string> verdict_columns() {
  std::vector<std::string> cols{"run_id", "created_at", "updated_at"};
  for (const auto& f : result_fields()) cols.push_back(f.name);
  cols.push_back("verdict_json");
  return cols;
}

// The slot: a sample under one set of conditions (the natural key without the file hashes).
std::string slot_equal(const std::string& a, const std::string& b) {
  std::vector<std::string> parts;
  for (const auto& f : result_fields())
    if (f.key && f.name != "problem_sha256" && f.name != "candidate_sha256")
      parts.push_back(fmt::format("{0}.{2} = {1}.{2}", a, b, f.name));
  return joined(parts, " AND ");
}

// 1 for a verdict a resume keeps, 0 for one it evaluates again (resume_rule.hpp).
std::string kept_rank(const std::string& t) {
  std::vector<std::string> kept;
  for (int o = 0; o <= static_cast<int>(Outcome::internal_error); ++o)
    if (static_cast<Outcome>(o) != Outcome::internal_error)
      kept.push_back("'" + std::string(outcome_name(static_cast<Outcome>(o))) + "'");
  return fmt::format("(CASE WHEN {}.outcome IN ({}) THEN 1 ELSE 0 END)", t, joined(kept, ", "));
}

// The input's verdict wins over the one in OUT (the rule in db_merge.hpp).
std::string input_wins(const std::string& s, const std::string& m) {
  return fmt::format("({0} > {1} OR ({0} = {1} AND ({2}.updated_at > {3}.updated_at OR ({2}.updated_at = {3}.updated_at AND "
                     "{2}.verdict_json > {3}.verdict_json))))",
                     kept_rank(s), kept_rank(m), s, m);
}

// A run is the same run in every DB it reached: same host, start time, pid and process start.
constexpr const char* kSameRun =
    "m.hostname IS s.hostname AND m.started_at IS s.started_at"
    " AND (CASE WHEN json_valid(m.options) THEN json_extract(m.options, '$.pid') END)"
    "  IS (CASE WHEN json_valid(s.options) THEN json_extract(s.options, '$.pid') END)"
    " AND (CASE WHEN json_valid(m.options) THEN json_extract(m.options, '$.process_start') END)"
    "  IS (CASE WHEN json_valid(s.options) THEN json_extract(s.options, '$.process_start') END)";

constexpr const char* kRunColumns =
    "started_at, finished_at, status, argv, kbv_version, git_commit, hostname, device_fingerprint, device_name, protocol,"
    " protocol_version, precision";

std::int64_t scalar(SqliteDb& db, const std::string& sql) {
  auto st = db.prepare(sql);
  return st.step() ? st.column_int(0) : 0;
}

void check_input(SqliteDb& db, const std::string& path) {
  auto has = db.prepare("SELECT count(*) FROM src.sqlite_master WHERE type = 'table' AND name IN ('meta', 'runs', 'verdicts')");
  if (!has.step() || has.column_int(0) != 3)
    throw StoreError("'" + path + "' is not a kbv results DB (no meta, runs and verdicts tables)");
  auto version = db.prepare("SELECT value FROM src.meta WHERE key = 'schema_version'");
  std::string v = version.step() ? version.column_text(0) : "";
  if (v != std::to_string(kStoreSchemaVersion))
    throw StoreError(fmt::format("'{}' has schema version '{}', this kbv writes {}: open it read-write with this kbv first "
                                 "(kbv run --db {} migrates it), then merge",
                                 path, v, kStoreSchemaVersion, path));
  auto check = db.prepare("PRAGMA src.quick_check(3)");
  if (check.step() && check.column_text(0) != "ok")
    throw StoreError("'" + path + "' is damaged (PRAGMA quick_check: " + check.column_text(0) +
                     "); salvage it first: sqlite3 " + path + " .recover | sqlite3 recovered.db");
}

// The input's runs, copied once each with where they came from; temp.run_map maps their ids.
std::int64_t merge_runs(SqliteDb& db, const std::string& input, const std::string& now) {
  db.exec("DROP TABLE IF EXISTS temp.run_map; CREATE TEMP TABLE run_map (src_id INTEGER PRIMARY KEY, main_id INTEGER)");
  auto insert = db.prepare(fmt::format(
      "INSERT INTO main.runs ({0}, options) SELECT {1},"
      " CASE WHEN json_valid(s.options) AND json_extract(s.options, '$.merged_from') IS NULL"
      "  THEN json_set(s.options, '$.merged_from', json_object('db', ?1, 'run_id', s.id, 'merged_at', ?2))"
      "  ELSE s.options END"
      " FROM src.runs s WHERE NOT EXISTS (SELECT 1 FROM main.runs m WHERE {2}) ORDER BY s.id",
      kRunColumns, joined(prefixed({"started_at", "finished_at", "status", "argv", "kbv_version", "git_commit", "hostname",
                                    "device_fingerprint", "device_name", "protocol", "protocol_version", "precision"},
                                   "s."),
                          ", "),
      kSameRun));
  insert.bind(1, input);
  insert.bind(2, now);
  insert.run();
  std::int64_t added = sqlite3_changes(db.handle());
  // A run copied while it was still going takes its end from a later merge of its DB.
  db.exec(fmt::format(
      "UPDATE main.runs AS m SET status = s.status, finished_at = s.finished_at,"
      " options = CASE WHEN json_valid(s.options) AND json_valid(m.options) AND json_extract(m.options, '$.merged_from') IS NOT NULL"
      "  THEN json_set(s.options, '$.merged_from', json(json_extract(m.options, '$.merged_from'))) ELSE s.options END"
      " FROM src.runs AS s WHERE {} AND m.status = 'running' AND s.status != 'running'",
      kSameRun));
  db.exec(fmt::format("INSERT INTO temp.run_map SELECT s.id, (SELECT m.id FROM main.runs m WHERE {} ORDER BY m.id LIMIT 1)"
                      " FROM src.runs s",
                      kSameRun));
  return added;
}

void merge_verdicts(SqliteDb& db, const std::string& out_path, const std::string& input, MergeSummary& summary) {
  // What to do with each of the input's verdicts: new slot, identical, or a conflict won or lost.
  db.exec(fmt::format(
      "DROP TABLE IF EXISTS temp.incoming;"
      " CREATE TEMP TABLE incoming AS SELECT s.id AS src_id, m.id AS main_id,"
      " CASE WHEN m.id IS NULL THEN 'new' WHEN s.verdict_json = m.verdict_json AND s.problem_sha256 = m.problem_sha256"
      "  AND s.candidate_sha256 = m.candidate_sha256 THEN 'same' WHEN {} THEN 'replace' ELSE 'keep' END AS action"
      " FROM src.verdicts s LEFT JOIN main.verdicts m ON {}",
      input_wins("s", "m"), slot_equal("s", "m")));
  {
    auto conflicts = db.prepare(
        "SELECT s.run_name, s.level, s.problem_id, s.sample_id, s.protocol, i.action, s.outcome, m.outcome,"
        " s.problem_sha256 = m.problem_sha256 AND s.candidate_sha256 = m.candidate_sha256"
        " FROM temp.incoming i JOIN src.verdicts s ON s.id = i.src_id JOIN main.verdicts m ON m.id = i.main_id"
        " WHERE i.action IN ('replace', 'keep') ORDER BY s.run_name, s.level, s.problem_id, s.sample_id, s.protocol");
    while (conflicts.step()) {
      MergeConflict c;
      c.run_name = conflicts.column_text(0);
      c.level = static_cast<int>(conflicts.column_int(1));
      c.problem_id = static_cast<int>(conflicts.column_int(2));
      c.sample_id = static_cast<int>(conflicts.column_int(3));
      c.protocol = conflicts.column_text(4);
      bool input_won = conflicts.column_text(5) == "replace";
      c.kept_outcome = conflicts.column_text(input_won ? 6 : 7);
      c.dropped_outcome = conflicts.column_text(input_won ? 7 : 6);
      c.kept_from = input_won ? input : out_path;
      c.dropped_from = input_won ? out_path : input;
      c.same_content = conflicts.column_int(8) != 0;
      summary.conflicts.push_back(std::move(c));
    }
  }
  summary.verdicts_identical += scalar(db, "SELECT count(*) FROM temp.incoming WHERE action = 'same'");
  summary.verdicts_replaced += scalar(db, "SELECT count(*) FROM temp.incoming WHERE action = 'replace'");
  db.exec("DELETE FROM main.verdicts WHERE id IN (SELECT main_id FROM temp.incoming WHERE action = 'replace')");
  std::vector<std::string> cols = verdict_columns();
  std::vector<std::string> from_input = prefixed(cols, "s.");
  from_input.front() = "(SELECT r.main_id FROM temp.run_map r WHERE r.src_id = s.run_id)";
  db.exec(fmt::format("INSERT INTO main.verdicts ({}) SELECT {} FROM src.verdicts s JOIN temp.incoming i ON i.src_id = s.id"
                      " WHERE i.action IN ('new', 'replace') ORDER BY s.id",
                      joined(cols, ", "), joined(from_input, ", ")));
  summary.verdicts_added += scalar(db, "SELECT count(*) FROM temp.incoming WHERE action = 'new'");
}

}  // namespace

MergeSummary merge_result_dbs(const std::string& out_path, const std::vector<std::string>& inputs) {
  for (const auto& in : inputs) {
    if (!fs::is_regular_file(in)) throw StoreError("input DB '" + in + "' is not a file");
    std::error_code ec;
    if (fs::exists(out_path) && fs::equivalent(in, out_path, ec))
      throw StoreError("input DB '" + in + "' is the output DB; merge other DBs into it");
  }
  { ResultStore create_or_migrate(out_path, ResultStore::Mode::read_write); }
  SqliteDb db(out_path, SqliteDb::Mode::read_write, kDefaultBusyTimeoutMs);
  MergeSummary summary;
  const std::string now = utc_now_iso();
  for (const auto& in : inputs) {
    const std::string input = fs::absolute(in).lexically_normal().string();
    // mode=ro: the merge never writes an input (nor checkpoints its WAL).
    auto attach = db.prepare("ATTACH DATABASE ?1 AS src");
    attach.bind(1, sqlite_file_uri(input) + "?mode=ro");
    attach.run();
    try {
      check_input(db, input);
      SqliteTransaction tx(db);
      summary.runs_added += merge_runs(db, input, now);
      merge_verdicts(db, out_path, input, summary);
      tx.commit();
    } catch (...) {
      db.exec("DETACH DATABASE src");
      throw;
    }
    db.exec("DROP TABLE IF EXISTS temp.incoming; DROP TABLE IF EXISTS temp.run_map; DETACH DATABASE src");
    ++summary.inputs;
  }
  summary.verdicts_total = scalar(db, "SELECT count(*) FROM main.verdicts");
  return summary;
}

}  // namespace kbv
