#include "store/result_store.hpp"

#include <unistd.h>

#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <mutex>

#include <fmt/format.h>

#include "store/process_identity.hpp"

namespace fs = std::filesystem;

namespace kbv {
namespace {

// Columns every schema version has had; migrations read them (plus verdict_json) and rebuild
// every other column from the verdict.
constexpr const char* kStableColumns =
    "run_id, created_at, updated_at, run_name, candidate_path, level, problem_id, sample_id, verdict_json";

std::string key_list() {
  std::string out;
  for (const auto& f : result_fields())
    if (f.key) out += (out.empty() ? "" : ", ") + f.name;
  return out;
}

std::string create_verdicts_sql() {
  std::string sql =
      "CREATE TABLE verdicts (\n"
      "  id INTEGER PRIMARY KEY,\n"
      "  run_id INTEGER REFERENCES runs(id),\n"
      "  created_at TEXT NOT NULL,\n"
      "  updated_at TEXT NOT NULL,\n";
  for (const auto& f : result_fields())
    sql += fmt::format("  {} {}{},\n", f.name, field_type_sql(f.type), f.key ? " NOT NULL" : "");
  sql += "  verdict_json TEXT NOT NULL,\n  UNIQUE (" + key_list() + ")\n);\n";
  sql += "CREATE INDEX verdicts_by_sample ON verdicts(run_name, level, problem_id, sample_id);\n";
  sql += "CREATE INDEX verdicts_by_protocol ON verdicts(protocol, run_name);\n";
  return sql;
}

constexpr const char* kCreateMeta = "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);";
constexpr const char* kCreateRuns =
    "CREATE TABLE runs (\n"
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
    "  started_at TEXT NOT NULL,\n"
    "  finished_at TEXT,\n"
    "  status TEXT NOT NULL,\n"
    "  argv TEXT NOT NULL,\n"
    "  kbv_version TEXT,\n"
    "  git_commit TEXT,\n"
    "  hostname TEXT,\n"
    "  device_fingerprint TEXT,\n"
    "  device_name TEXT,\n"
    "  protocol TEXT,\n"
    "  protocol_version INTEGER,\n"
    "  precision TEXT,\n"
    "  options TEXT NOT NULL\n"
    ");";

std::string upsert_sql() {
  std::string cols = "run_id, created_at, updated_at";
  std::string params = "?1, ?2, ?3";
  std::string updates = "run_id = excluded.run_id, updated_at = excluded.updated_at";
  int i = 4;
  for (const auto& f : result_fields()) {
    cols += ", " + f.name;
    params += fmt::format(", ?{}", i++);
    if (!f.key) updates += fmt::format(", {0} = excluded.{0}", f.name);
  }
  cols += ", verdict_json";
  params += fmt::format(", ?{}", i);
  updates += ", verdict_json = excluded.verdict_json";
  return fmt::format("INSERT INTO verdicts ({}) VALUES ({}) ON CONFLICT ({}) DO UPDATE SET {}", cols, params,
                     key_list(), updates);
}

std::string key_where() {
  std::string out;
  int i = 1;
  for (const auto& f : result_fields())
    if (f.key) out += fmt::format("{}{} = ?{}", out.empty() ? "" : " AND ", f.name, i++);
  return out;
}

// The key without the file contents: one sample under one set of conditions.
std::string stale_delete_sql() {
  std::string where;
  int i = 1;
  for (const auto& f : result_fields())
    if (f.key && f.name != "problem_sha256" && f.name != "candidate_sha256")
      where += fmt::format("{}{} = ?{}", where.empty() ? "" : " AND ", f.name, i++);
  return fmt::format("DELETE FROM verdicts WHERE {} AND (problem_sha256 != ?{} OR candidate_sha256 != ?{})", where, i,
                     i + 1);
}

FieldValue key_value(const VerdictKey& k, const std::string& name) {
  if (name == "run_name") return k.run_name;
  if (name == "level") return std::int64_t{k.level};
  if (name == "problem_id") return std::int64_t{k.problem_id};
  if (name == "sample_id") return std::int64_t{k.sample_id};
  if (name == "problem_sha256") return k.problem_sha256;
  if (name == "candidate_sha256") return k.candidate_sha256;
  if (name == "protocol") return k.protocol;
  if (name == "protocol_version") return std::int64_t{k.protocol_version};
  if (name == "precision") return k.precision;
  if (name == "problem_size") return k.problem_size;
  if (name == "device_fingerprint") return k.device_fingerprint;
  throw std::logic_error("VerdictKey has no member for key field '" + name + "'");
}

void bind_value(SqliteStatement& st, int index, const FieldValue& v) {
  if (std::holds_alternative<std::int64_t>(v)) st.bind(index, std::get<std::int64_t>(v));
  else if (std::holds_alternative<double>(v)) st.bind(index, std::get<double>(v));
  else if (std::holds_alternative<std::string>(v)) st.bind(index, std::get<std::string>(v));
  else st.bind_null(index);
}

void bind_key(SqliteStatement& st, const VerdictKey& key) {
  int i = 1;
  for (const auto& f : result_fields())
    if (f.key) bind_value(st, i++, key_value(key, f.name));
}

void drop_nulls(nlohmann::json& j) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end();) {
      if (it->is_null()) {
        it = j.erase(it);
      } else {
        drop_nulls(*it);
        ++it;
      }
    }
  } else if (j.is_array()) {
    for (auto& e : j) drop_nulls(e);
  }
}

int parse_version(const std::string& path, const std::string& text) {
  try {
    return std::stoi(text);
  } catch (const std::exception&) {
    throw StoreError("results DB '" + path + "' has no valid schema_version in its meta table ('" + text + "')");
  }
}

std::string meta_get(SqliteDb& db, const std::string& key) {
  auto st = db.prepare("SELECT value FROM meta WHERE key = ?1");
  st.bind(1, key);
  return st.step() ? st.column_text(0) : std::string();
}

void meta_set(SqliteDb& db, const std::string& key, const std::string& value) {
  auto st = db.prepare("INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value");
  st.bind(1, key);
  st.bind(2, value);
  st.run();
}

// kbv cannot write to the file or to its folder (where SQLite keeps the -shm and -wal files).
bool cannot_write(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return false;  // let the normal open say the file is missing
  fs::path dir = fs::absolute(path, ec).parent_path();
  return ::access(path.c_str(), W_OK) != 0 || ::access(dir.c_str(), W_OK | X_OK) != 0;
}

std::string immutable_note(const std::string& path) {
  std::string note = fmt::format(
      "'{}' was opened read-only and immutable (kbv cannot write to it or to its folder): SQLite reads the file as it "
      "is, without locks, so a kbv run writing to it at the same time is not seen consistently",
      path);
  std::error_code ec;
  auto wal = fs::file_size(path + "-wal", ec);
  if (!ec && wal > 0)
    note += fmt::format(
        "; its -wal file ({} bytes of commits not yet merged into the DB) is ignored, so the newest verdicts may be "
        "missing: read it where it is writable, or have its owner run `sqlite3 {} 'PRAGMA wal_checkpoint(TRUNCATE)'`",
        wal, path);
  return note;
}

// A key part that is empty says the verdict does not know what was measured (a worker that
// died before saying); the store refuses it rather than keep a row no resume will ever find.
void check_key_is_complete(const VerdictKey& k, const Verdict& v) {
  std::string missing;
  auto need = [&](bool ok, const char* what) {
    if (!ok) missing += (missing.empty() ? "" : ", ") + std::string(what);
  };
  need(!k.protocol.empty(), "protocol");
  need(k.protocol_version > 0, "protocol_version");
  need(!k.problem_sha256.empty(), "problem sha256");
  need(!k.candidate_sha256.empty(), "candidate sha256");
  need(!v.device.name.empty(), "device name");
  if (!missing.empty())
    throw StoreError(fmt::format("refusing to store a verdict for {} L{} P{} S{} without {}: fill them from the job",
                                 k.run_name, k.level, k.problem_id, k.sample_id, missing));
}

}  // namespace

Verdict verdict_from_json_text(const std::string& text, bool keep_samples) {
  auto j = nlohmann::json::parse(text);
  drop_nulls(j);
  if (!keep_samples && j.contains("timing") && j["timing"].contains("series"))
    for (auto& s : j["timing"]["series"]) s.erase("samples_ms");
  return j.get<Verdict>();
}

std::string verdict_to_json_text(const Verdict& v) {
  return nlohmann::json(v).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void refuse_if_not_sqlite(const std::string& path) {
  // SQLite's own message ("file is not a database") would come with the statement it failed on.
  std::ifstream in(path, std::ios::binary);
  if (!in) return;  // absent (created) or unreadable (SQLite says so)
  char header[16] = {};
  in.read(header, sizeof header);
  const std::streamsize got = in.gcount();
  if (got == 0) return;  // empty: SQLite makes it a DB
  static constexpr char kMagic[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f', 'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};
  if (got < 16 || std::memcmp(header, kMagic, sizeof kMagic) != 0)
    throw StoreError("'" + path + "' is not a SQLite database (a kbv results DB is one); pass a new path, which kbv run "
                     "creates, or a DB that kbv run wrote");
}

struct ResultStore::Impl {
  std::mutex mu;  // one connection and cached statements: calls from several threads take turns
  SqliteDb::Mode sqlite_mode;  // before db: it decides how db opens
  SqliteDb db;
  int version = 0;
  std::string open_note;
  std::optional<SqliteStatement> upsert, has, get, delete_stale, summary;

  static SqliteDb::Mode sqlite_mode_for(const std::string& path, Mode mode) {
    if (mode == Mode::read_write) return SqliteDb::Mode::read_write;
    return cannot_write(path) ? SqliteDb::Mode::immutable : SqliteDb::Mode::read_only;
  }

  Impl(const std::string& path, Mode mode, int busy_timeout_ms)
      : sqlite_mode((refuse_if_not_sqlite(path), sqlite_mode_for(path, mode))), db(path, sqlite_mode, busy_timeout_ms) {
    if (sqlite_mode == SqliteDb::Mode::immutable) open_note = immutable_note(path);
    if (mode == Mode::read_write) {
      refuse_if_damaged();
      // WAL: readers (kbv report) never block the writer; NORMAL sync is durable in WAL mode
      // up to the last commit before a power loss, which a re-run then redoes.
      {
        auto wal = db.prepare("PRAGMA journal_mode = WAL");
        wal.step();
      }  // finalized here: an unfinished statement would block the COMMIT below
      db.exec("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;");
      create_or_migrate();
      mark_dead_runs();
    } else {
      if (!db.table_exists("meta"))
        throw StoreError("'" + path + "' is not a kbv results DB (no meta table); `kbv run --db` writes one");
      version = parse_version(db.path(), meta_get(db, "schema_version"));
      check_not_newer();
    }
  }

  // Writing into a file with damaged pages spreads the damage; quick_check reads every page
  // (O(size), seconds for a large DB) but skips the index-content checks of integrity_check.
  void refuse_if_damaged() {
    auto st = db.prepare("PRAGMA quick_check(5)");
    std::string problems;
    while (st.step()) {
      std::string line = st.column_text(0);
      if (line == "ok") return;
      problems += (problems.empty() ? "" : "; ") + line;
    }
    throw StoreError(fmt::format(
        "results DB '{0}' is damaged (PRAGMA quick_check: {1}); kbv will not write into it. Pass another --db, and "
        "salvage what it holds with `sqlite3 {0} .recover | sqlite3 recovered.db` (kbv report may still read it)",
        db.path(), problems.substr(0, 500)));
  }

  // A `running` row whose kbv process on this host is gone (kill -9, a crash, a power loss)
  // will never be finished by it. Rows of other hosts cannot be checked from here, and rows
  // without a pid (written before kbv recorded it) are left as they are. Housekeeping only: a
  // locked DB leaves them for the next open.
  void mark_dead_runs() {
    try {
      ProcessIdentity me = this_process();
      std::vector<std::pair<std::int64_t, nlohmann::json>> dead;
      {
        auto st = db.prepare("SELECT id, hostname, options FROM runs WHERE status = 'running'");
        while (st.step()) {
          if (st.column_text(1) != me.hostname) continue;
          auto options = nlohmann::json::parse(st.column_text(2), nullptr, false);
          if (!options.is_object() || !options.contains("pid")) continue;
          auto pid = options.value("pid", std::int64_t{0});
          auto start = options.value("process_start", std::uint64_t{0});
          if (process_is_running(pid, start)) continue;
          options["marked_interrupted"] = {{"at", utc_now_iso()}, {"by_pid", me.pid},
                                           {"why", fmt::format("its kbv process (pid {}) was gone", pid)}};
          dead.emplace_back(st.column_int(0), std::move(options));
        }
      }
      for (const auto& [id, options] : dead) {
        auto st = db.prepare("UPDATE runs SET status = 'interrupted', finished_at = ?1, options = ?2 WHERE id = ?3");
        st.bind(1, utc_now_iso());
        st.bind(2, options.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
        st.bind(3, id);
        st.run();
      }
    } catch (const StoreError&) {
    }
  }

  void check_not_newer() {
    if (version > kStoreSchemaVersion)
      throw StoreError(fmt::format("results DB '{}' has schema version {}, newer than this kbv's {}; use a newer kbv",
                                   db.path(), version, kStoreSchemaVersion));
  }

  void create_or_migrate() {
    SqliteTransaction tx(db);
    if (!db.table_exists("meta")) {
      auto any = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
      if (any.step())
        throw StoreError("'" + db.path() + "' is an SQLite file but not a kbv results DB (it has table '" +
                         any.column_text(0) + "' and no meta); pass another --db");
      db.exec(kCreateMeta);
      db.exec(kCreateRuns);
      db.exec(create_verdicts_sql());
      meta_set(db, "schema_version", std::to_string(kStoreSchemaVersion));
      meta_set(db, "created_at", utc_now_iso());
      version = kStoreSchemaVersion;
    } else {
      version = parse_version(db.path(), meta_get(db, "schema_version"));
      check_not_newer();
      if (version < kStoreSchemaVersion) migrate();
    }
    tx.commit();
  }

  // Every migration so far is "rebuild `verdicts` from verdict_json": the JSON is the lossless
  // record, so new or changed columns and keys are recomputed from it by the current fields.
  void migrate() {
    if (!db.table_exists("runs")) db.exec(kCreateRuns);
    std::string old_table = fmt::format("verdicts_v{}", version);
    db.exec("DROP INDEX IF EXISTS verdicts_by_sample; DROP INDEX IF EXISTS verdicts_by_protocol;");
    db.exec(fmt::format("ALTER TABLE verdicts RENAME TO {}", old_table));
    db.exec(create_verdicts_sql());
    prepare_statements();
    auto rows = db.prepare(fmt::format("SELECT {} FROM {} ORDER BY id", kStableColumns, old_table));
    while (rows.step()) {
      VerdictRecord r = read_record(rows, true);
      write(r);
    }
    db.exec(fmt::format("DROP TABLE {}", old_table));
    meta_set(db, "schema_version", std::to_string(kStoreSchemaVersion));
    meta_set(db, fmt::format("migrated_from_v{}_at", version), utc_now_iso());
    version = kStoreSchemaVersion;
  }

  void prepare_statements() {
    if (upsert) return;
    upsert.emplace(db.prepare(upsert_sql()));
    has.emplace(db.prepare("SELECT 1 FROM verdicts WHERE " + key_where()));
    get.emplace(db.prepare(fmt::format("SELECT {} FROM verdicts WHERE {}", kStableColumns, key_where())));
    delete_stale.emplace(db.prepare(stale_delete_sql()));
  }

  static VerdictRecord read_record(SqliteStatement& st, bool keep_samples) {
    VerdictRecord r;
    r.run_id = st.column_is_null(0) ? 0 : st.column_int(0);
    r.created_at = st.column_text(1);
    r.updated_at = st.column_text(2);
    r.sample.run_name = st.column_text(3);
    r.sample.candidate_path = st.column_text(4);
    r.sample.level = static_cast<int>(st.column_int(5));
    r.sample.problem_id = static_cast<int>(st.column_int(6));
    r.sample.sample_id = static_cast<int>(st.column_int(7));
    r.verdict = verdict_from_json_text(st.column_text(8), keep_samples);
    return r;
  }

  // Upserts one record (created_at/updated_at as given).
  void write(const VerdictRecord& r) {
    auto& st = *upsert;
    st.reset();
    if (r.run_id > 0) st.bind(1, r.run_id);
    else st.bind_null(1);
    st.bind(2, r.created_at);
    st.bind(3, r.updated_at);
    int i = 4;
    for (const auto& f : result_fields()) bind_value(st, i++, f.extract(r));
    st.bind(i, verdict_to_json_text(r.verdict));
    st.run();
  }
};

ResultStore::ResultStore(const std::string& path, Mode mode, int busy_timeout_ms)
    : impl_(std::make_unique<Impl>(path, mode, busy_timeout_ms)) {
  if (mode == Mode::read_write) impl_->prepare_statements();
}
ResultStore::~ResultStore() = default;
ResultStore::ResultStore(ResultStore&&) noexcept = default;
ResultStore& ResultStore::operator=(ResultStore&&) noexcept = default;

int ResultStore::schema_version() const { return impl_->version; }
const std::string& ResultStore::path() const { return impl_->db.path(); }
const std::string& ResultStore::open_note() const { return impl_->open_note; }

std::int64_t ResultStore::begin_run(RunRecord run) {
  std::lock_guard lock(impl_->mu);
  if (run.started_at.empty()) run.started_at = utc_now_iso();
  ProcessIdentity me = this_process();
  if (run.hostname.empty()) run.hostname = me.hostname;
  if (!run.options.is_object()) run.options = nlohmann::json::object();
  run.options["pid"] = me.pid;
  run.options["process_start"] = me.start_ticks;
  auto st = impl_->db.prepare(
      "INSERT INTO runs (started_at, finished_at, status, argv, kbv_version, git_commit, hostname, device_fingerprint,"
      " device_name, protocol, protocol_version, precision, options) VALUES (?1, NULL, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9,"
      " ?10, ?11, ?12)");
  st.bind(1, run.started_at);
  st.bind(2, run.status);
  st.bind(3, nlohmann::json(run.argv).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  st.bind(4, run.kbv_version);
  st.bind(5, run.git_commit);
  st.bind(6, run.hostname);
  st.bind(7, run.device_fingerprint);
  st.bind(8, run.device_name);
  st.bind(9, run.protocol);
  st.bind(10, run.protocol_version);
  st.bind(11, run.precision);
  st.bind(12, run.options.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  st.run();
  return sqlite3_last_insert_rowid(impl_->db.handle());
}

void ResultStore::finish_run(std::int64_t run_id, const std::string& status, const nlohmann::json& extra) {
  std::lock_guard lock(impl_->mu);
  nlohmann::json options = nlohmann::json::object();
  {
    auto read = impl_->db.prepare("SELECT options FROM runs WHERE id = ?1");
    read.bind(1, run_id);
    if (read.step()) options = nlohmann::json::parse(read.column_text(0), nullptr, false);
    if (!options.is_object()) options = nlohmann::json::object();
  }
  if (extra.is_object()) options.update(extra);
  auto st = impl_->db.prepare("UPDATE runs SET finished_at = ?1, status = ?2, options = ?3 WHERE id = ?4");
  st.bind(1, utc_now_iso());
  st.bind(2, status);
  st.bind(3, options.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  st.bind(4, run_id);
  st.run();
}

std::vector<RunRecord> ResultStore::runs() {
  std::lock_guard lock(impl_->mu);
  auto st = impl_->db.prepare(
      "SELECT id, started_at, finished_at, status, argv, kbv_version, git_commit, hostname, device_fingerprint,"
      " device_name, protocol, protocol_version, precision, options FROM runs ORDER BY id");
  std::vector<RunRecord> out;
  while (st.step()) {
    RunRecord r;
    r.id = st.column_int(0);
    r.started_at = st.column_text(1);
    r.finished_at = st.column_text(2);
    r.status = st.column_text(3);
    r.argv = nlohmann::json::parse(st.column_text(4), nullptr, false).get<std::vector<std::string>>();
    r.kbv_version = st.column_text(5);
    r.git_commit = st.column_text(6);
    r.hostname = st.column_text(7);
    r.device_fingerprint = st.column_text(8);
    r.device_name = st.column_text(9);
    r.protocol = st.column_text(10);
    r.protocol_version = static_cast<int>(st.column_int(11));
    r.precision = st.column_text(12);
    r.options = nlohmann::json::parse(st.column_text(13), nullptr, false);
    out.push_back(std::move(r));
  }
  return out;
}

VerdictKey ResultStore::key_of(const SampleRef& sample, const Verdict& v) {
  VerdictKey k;
  k.run_name = sample.run_name;
  k.level = sample.level;
  k.problem_id = sample.problem_id;
  k.sample_id = sample.sample_id;
  k.problem_sha256 = v.problem.sha256;
  k.candidate_sha256 = v.candidate.sha256;
  k.protocol = v.protocol;
  k.protocol_version = v.protocol_version;
  k.precision = v.precision;
  k.problem_size = v.problem.size;
  k.device_fingerprint = device_fingerprint(v.device);
  return k;
}

bool ResultStore::has_verdict(const VerdictKey& key) {
  std::lock_guard lock(impl_->mu);
  if (!impl_->has) impl_->has.emplace(impl_->db.prepare("SELECT 1 FROM verdicts WHERE " + key_where()));
  auto& st = *impl_->has;
  st.reset();
  bind_key(st, key);
  bool found = st.step();
  st.reset();
  return found;
}

std::optional<StoredVerdictSummary> ResultStore::stored_summary(const VerdictKey& key) {
  std::lock_guard lock(impl_->mu);
  // json_valid first: json_extract on a damaged verdict_json would fail the whole statement.
  if (!impl_->summary)
    impl_->summary.emplace(impl_->db.prepare(
        "SELECT outcome, stage,"
        " CASE WHEN json_valid(verdict_json) THEN json_extract(verdict_json, '$.limits.compile_timeout_seconds') END,"
        " CASE WHEN json_valid(verdict_json) THEN json_extract(verdict_json, '$.limits.run_timeout_seconds') END,"
        " CASE WHEN json_valid(verdict_json) THEN json_extract(verdict_json, '$.problem.hidden_tests.sha256') END,"
        " CASE WHEN json_valid(verdict_json) THEN json_type(verdict_json, '$.timing') END,"
        " CASE WHEN json_valid(verdict_json) THEN json_type(verdict_json, '$.timing.torch_compile_seconds') END"
        " FROM verdicts WHERE " + key_where()));
  auto& st = *impl_->summary;
  st.reset();
  bind_key(st, key);
  std::optional<StoredVerdictSummary> out;
  if (st.step()) {
    out.emplace();
    out->outcome = st.column_text(0);
    out->stage = st.column_text(1);
    if (!st.column_is_null(2) || !st.column_is_null(3))
      out->limits = VerdictLimits{st.column_is_null(2) ? 0 : st.column_double(2), st.column_is_null(3) ? 0 : st.column_double(3)};
    if (!st.column_is_null(4)) out->hidden_tests_sha256 = st.column_text(4);
    out->timed = !st.column_is_null(5) && st.column_text(5) == "object";
    out->torch_compile_timed = !st.column_is_null(6);
  }
  st.reset();
  return out;
}

std::optional<VerdictRecord> ResultStore::get_verdict(const VerdictKey& key) {
  std::lock_guard lock(impl_->mu);
  if (!impl_->get)
    impl_->get.emplace(impl_->db.prepare(fmt::format("SELECT {} FROM verdicts WHERE {}", kStableColumns, key_where())));
  auto& st = *impl_->get;
  st.reset();
  bind_key(st, key);
  std::optional<VerdictRecord> out;
  if (st.step()) out = Impl::read_record(st, true);
  st.reset();
  return out;
}

void ResultStore::put_verdict(const std::string& run_name, const std::string& candidate_path, int level,
                              int problem_id, int sample_id, const Verdict& verdict, std::int64_t run_id) {
  put_verdict(SampleRef{run_name, candidate_path, level, problem_id, sample_id}, verdict, run_id);
}

void ResultStore::put_verdict(const SampleRef& sample, const Verdict& verdict, std::int64_t run_id) {
  std::lock_guard lock(impl_->mu);
  if (!impl_->upsert) throw StoreError("results DB '" + path() + "' was opened read-only");
  auto key = key_of(sample, verdict);
  check_key_is_complete(key, verdict);
  VerdictRecord r{sample, verdict, run_id, utc_now_iso(), ""};
  r.updated_at = r.created_at;
  SqliteTransaction tx(impl_->db);
  auto& del = *impl_->delete_stale;
  del.reset();
  int i = 1;
  for (const auto& f : result_fields())
    if (f.key && f.name != "problem_sha256" && f.name != "candidate_sha256") bind_value(del, i++, key_value(key, f.name));
  del.bind(i, key.problem_sha256);
  del.bind(i + 1, key.candidate_sha256);
  del.run();
  impl_->write(r);
  tx.commit();
}

std::vector<VerdictRecord> ResultStore::verdicts(const VerdictQuery& query, std::vector<UnreadableRow>* unreadable) {
  std::lock_guard lock(impl_->mu);
  // id and the protocol (from the JSON, when it parses) come after the stable columns: they
  // name a row that cannot be read.
  std::string sql = fmt::format(
      "SELECT {}, id, CASE WHEN json_valid(verdict_json) THEN json_extract(verdict_json, '$.protocol') END"
      " FROM verdicts WHERE 1",
      kStableColumns);
  if (query.protocol) sql += " AND protocol = ?1";
  if (query.run_name) sql += " AND run_name = ?2";
  sql += " ORDER BY run_name, level, problem_id, sample_id, protocol, id";
  auto st = impl_->db.prepare(sql);
  if (query.protocol) st.bind(1, *query.protocol);
  if (query.run_name) st.bind(2, *query.run_name);
  std::vector<VerdictRecord> out;
  while (st.step()) {
    try {
      out.push_back(Impl::read_record(st, query.keep_samples));
    } catch (const std::exception& e) {
      if (!unreadable) continue;
      UnreadableRow bad;
      bad.id = st.column_int(9);
      bad.sample = {st.column_text(3), st.column_text(4), static_cast<int>(st.column_int(5)),
                    static_cast<int>(st.column_int(6)), static_cast<int>(st.column_int(7))};
      bad.protocol = st.column_text(10);
      bad.error = e.what();
      unreadable->push_back(std::move(bad));
    }
  }
  return out;
}

std::int64_t ResultStore::verdict_count() {
  std::lock_guard lock(impl_->mu);
  auto st = impl_->db.prepare("SELECT COUNT(*) FROM verdicts");
  st.step();
  return st.column_int(0);
}

}  // namespace kbv
