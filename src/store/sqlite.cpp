#include "store/sqlite.hpp"

#include <fmt/format.h>

namespace kbv {
namespace {

// A file: URI for `path` (RFC 3986 percent-encoding of what SQLite's URI parser would read as
// syntax: '?', '#', '%'), so query parameters such as immutable=1 can follow.
std::string file_uri(const std::string& path) {
  std::string out = "file:";
  for (char c : path) {
    if (c == '?' || c == '#' || c == '%') out += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    else out += c;
  }
  return out;
}

}  // namespace

std::string sqlite_file_uri(const std::string& path) { return file_uri(path); }

bool store_error_is_transient(const StoreError& e) {
  switch (e.sqlite_code & 0xff) {  // the primary code
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_FULL:
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_PROTOCOL:
      return true;
    default:
      return false;
  }
}

SqliteDb::SqliteDb(const std::string& path, Mode mode, int busy_timeout_ms) : path_(path) {
  // Always a file: URI (the path percent-encoded, so it means the same file), so that ATTACH on
  // this connection can take URI parameters too (kbv merge attaches its inputs with mode=ro).
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI;
  std::string name = file_uri(path);
  if (mode == Mode::read_only) flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_URI;
  if (mode == Mode::immutable) {
    flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_URI;
    name += "?immutable=1";
  }
  int rc = sqlite3_open_v2(name.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    int code = db_ ? sqlite3_extended_errcode(db_) : rc;
    sqlite3_close(db_);
    db_ = nullptr;
    throw StoreError("cannot open results DB '" + path + "': " + msg +
                         (mode != Mode::read_write ? " (does the file exist? `kbv run` creates it)" : ""),
                     code);
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, busy_timeout_ms);
}

SqliteDb::~SqliteDb() { sqlite3_close_v2(db_); }

void SqliteDb::exec(std::string_view sql) {
  std::string text(sql);
  char* err = nullptr;
  if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db_);
    sqlite3_free(err);
    throw StoreError("results DB '" + path_ + "': " + msg + " in: " + text.substr(0, 200), sqlite3_extended_errcode(db_));
  }
}

SqliteStatement SqliteDb::prepare(std::string_view sql) { return SqliteStatement(*this, sql); }

bool SqliteDb::table_exists(std::string_view name) {
  auto st = prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1");
  st.bind(1, name);
  return st.step();
}

SqliteStatement::SqliteStatement(SqliteDb& db, std::string_view sql) : db_(db.handle()) {
  if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr) != SQLITE_OK)
    throw StoreError("results DB '" + db.path() + "': " + sqlite3_errmsg(db_) + " in: " + std::string(sql.substr(0, 200)),
                     sqlite3_extended_errcode(db_));
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(stmt_); }

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept : stmt_(other.stmt_), db_(other.db_) {
  other.stmt_ = nullptr;
}

void SqliteStatement::fail(const char* what) const {
  const char* sql = stmt_ ? sqlite3_sql(stmt_) : nullptr;
  throw StoreError(std::string("results DB: ") + what + ": " + sqlite3_errmsg(db_) +
                       (sql ? std::string(" in: ") + std::string(sql).substr(0, 200) : std::string()),
                   sqlite3_extended_errcode(db_));
}

void SqliteStatement::bind_null(int index) {
  if (sqlite3_bind_null(stmt_, index) != SQLITE_OK) fail("bind");
}
void SqliteStatement::bind(int index, std::int64_t value) {
  if (sqlite3_bind_int64(stmt_, index, value) != SQLITE_OK) fail("bind");
}
void SqliteStatement::bind(int index, double value) {
  if (sqlite3_bind_double(stmt_, index, value) != SQLITE_OK) fail("bind");
}
void SqliteStatement::bind(int index, std::string_view value) {
  if (sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT) != SQLITE_OK)
    fail("bind");
}

bool SqliteStatement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail("step");
}

void SqliteStatement::run() {
  while (step()) {
  }
}

void SqliteStatement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool SqliteStatement::column_is_null(int index) const { return sqlite3_column_type(stmt_, index) == SQLITE_NULL; }
std::int64_t SqliteStatement::column_int(int index) const { return sqlite3_column_int64(stmt_, index); }
double SqliteStatement::column_double(int index) const { return sqlite3_column_double(stmt_, index); }
std::string SqliteStatement::column_text(int index) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, index));
  if (!p) return {};
  return std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, index)));
}
int SqliteStatement::column_count() const { return sqlite3_column_count(stmt_); }
std::string SqliteStatement::column_name(int index) const {
  const char* n = sqlite3_column_name(stmt_, index);
  return n ? n : "";
}

SqliteTransaction::SqliteTransaction(SqliteDb& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

SqliteTransaction::~SqliteTransaction() {
  if (!done_) sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void SqliteTransaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

}  // namespace kbv
