#pragma once
// The results store: one SQLite file holding every verdict of every `kbv run`, so a re-run
// resumes instead of duplicating and `kbv report` / `kbv export` read one place. Only the
// orchestrating process writes (workers never open it); readers may run at the same time (WAL).
// Schema and rules: docs/store.md. The per-verdict columns come from result_fields().
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/utc_time.hpp"
#include "core/verdict.hpp"
#include "store/result_fields.hpp"
#include "store/sqlite.hpp"

namespace kbv {

// Bump on any change to the tables or to result_fields(); opening an older DB read-write
// migrates it (docs/store.md, "Migrations").
inline constexpr int kStoreSchemaVersion = 2;

// How long one statement waits for another connection's lock before failing with SQLITE_BUSY.
inline constexpr int kDefaultBusyTimeoutMs = 30000;

// One invocation of `kbv run`.
struct RunRecord {
  std::int64_t id = 0;              // assigned by begin_run
  std::string started_at;           // UTC ISO 8601; begin_run fills it when empty
  std::string finished_at;          // empty while running
  std::string status = "running";   // running / finished / interrupted / failed
  std::vector<std::string> argv;
  std::string kbv_version;
  std::string git_commit;
  std::string hostname;             // begin_run fills it when empty
  std::string device_fingerprint;   // device_fingerprint() of the device it evaluated on
  std::string device_name;
  std::string protocol;
  int protocol_version = 0;
  std::string precision;
  // Anything else worth keeping: paths, limits. begin_run adds "pid" and "process_start" (the
  // writer's identity), by which a later open tells a dead run from a live one.
  nlohmann::json options = nlohmann::json::object();
};

// The natural key of a verdict: where it belongs and under which conditions it was measured.
// Two verdicts with equal keys are the same measurement; the store keeps one.
struct VerdictKey {
  std::string run_name;
  int level = 0;
  int problem_id = -1;
  int sample_id = 0;
  std::string problem_sha256;
  std::string candidate_sha256;
  std::string protocol;
  int protocol_version = 0;
  std::string precision = "fp32";
  std::string problem_size = "default";
  std::string device_fingerprint;
};

// What a resume decision needs of a stored verdict, read from its columns without parsing it.
struct StoredVerdictSummary {
  std::string outcome;                  // as stored: may be a name this kbv does not know
  std::string stage;
  std::optional<VerdictLimits> limits;  // absent in verdicts written before kbv recorded them
  std::string hidden_tests_sha256;      // the hidden-test file it was checked on; "" when none
  bool timed = false;                   // it has timing results
  bool torch_compile_timed = false;     // ...with the torch_compile baseline tried
};

// A row whose verdict_json cannot be read (invalid JSON, an unknown outcome name): readers name
// it and go on without it instead of failing the whole report.
struct UnreadableRow {
  std::int64_t id = 0;    // verdicts.id
  SampleRef sample;
  std::string protocol;   // "" when even that cannot be read
  std::string error;
};

// Which verdicts to load.
struct VerdictQuery {
  std::optional<std::string> protocol;  // only this protocol
  std::optional<std::string> run_name;  // only this run
  bool keep_samples = true;             // false drops timing.series[].samples_ms (reports do not need them)
};

// Throws StoreError, naming the file, when `path` exists, is not empty and is not a SQLite
// database: kbv run calls it before it takes the DB's lock, and every ResultStore opens with it.
void refuse_if_not_sqlite(const std::string& path);

// Safe to call from several threads of the orchestrating process (calls are serialised).
class ResultStore {
 public:
  enum class Mode { read_only, read_write };

  // read_write creates the file and the schema, or migrates an older schema; it refuses a file
  // that fails PRAGMA quick_check (kbv does not write into a damaged DB) and marks `running`
  // rows of dead kbv processes on this host `interrupted`. read_only never writes; it reads any
  // schema up to this kbv's, and opens the file immutable when kbv cannot write to it or to its
  // folder (a DB on a read-only medium or in someone else's folder). Throws StoreError (e.g. a
  // newer schema).
  explicit ResultStore(const std::string& path, Mode mode = Mode::read_write,
                       int busy_timeout_ms = kDefaultBusyTimeoutMs);
  ~ResultStore();
  ResultStore(ResultStore&&) noexcept;
  ResultStore& operator=(ResultStore&&) noexcept;

  int schema_version() const;
  const std::string& path() const;
  // What a reader should know about how the file was opened (immutable, an ignored -wal file);
  // "" when nothing.
  const std::string& open_note() const;

  // Records one `kbv run` invocation; returns its id for put_verdict.
  std::int64_t begin_run(RunRecord run);
  // `extra` (an object) is merged into the run's options, e.g. {"throughput": ...}.
  void finish_run(std::int64_t run_id, const std::string& status = "finished",
                  const nlohmann::json& extra = nlohmann::json::object());
  std::vector<RunRecord> runs();

  static VerdictKey key_of(const SampleRef& sample, const Verdict& v);
  bool has_verdict(const VerdictKey& key);
  std::optional<StoredVerdictSummary> stored_summary(const VerdictKey& key);
  std::optional<VerdictRecord> get_verdict(const VerdictKey& key);

  // Inserts, or replaces the verdict with the same key (keeping its created_at). A verdict for
  // the same sample and conditions but different file contents (the candidate or problem was
  // edited) replaces the stale one: the store holds the current verdict of each sample. Refuses
  // (StoreError) a verdict without protocol, protocol version, file hashes or device name: its
  // key would not say what was measured.
  void put_verdict(const std::string& run_name, const std::string& candidate_path, int level, int problem_id,
                   int sample_id, const Verdict& verdict, std::int64_t run_id = 0);
  void put_verdict(const SampleRef& sample, const Verdict& verdict, std::int64_t run_id = 0);

  // Verdicts ordered by run, level, problem, sample, protocol. A row that cannot be read is left
  // out and, when `unreadable` is given, appended to it.
  std::vector<VerdictRecord> verdicts(const VerdictQuery& query = {}, std::vector<UnreadableRow>* unreadable = nullptr);
  std::int64_t verdict_count();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Parses a verdict's JSON leniently (nulls, e.g. from NaN, read as absent).
Verdict verdict_from_json_text(const std::string& text, bool keep_samples = true);
// Serialises a verdict; invalid UTF-8 in captured output is replaced, never an error.
std::string verdict_to_json_text(const Verdict& v);

}  // namespace kbv
