#pragma once
// A thin RAII layer over the SQLite C API: one connection, prepared statements with typed
// binds, and a transaction guard. Every failure throws StoreError with SQLite's message and the
// statement that failed. Only the results store uses it.
#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kbv {

// The results store could not do what was asked (unreadable file, newer schema, SQL failure).
// `sqlite_code` is SQLite's extended result code when SQLite reported the failure, else 0.
struct StoreError : std::runtime_error {
  explicit StoreError(const std::string& what, int sqlite_code = 0)
      : std::runtime_error(what), sqlite_code(sqlite_code) {}
  int sqlite_code = 0;
};

// A failure that may pass if the same write is tried again later: the DB is locked by another
// connection, the disk is full, an I/O error. Anything else (a constraint, a bad schema) will
// fail again the same way.
bool store_error_is_transient(const StoreError& e);

// A file: URI naming `path` (its '?', '#' and '%' percent-encoded), to which URI parameters
// such as "?mode=ro" can be appended. SqliteDb connections accept URIs, in ATTACH too.
std::string sqlite_file_uri(const std::string& path);

class SqliteStatement;

class SqliteDb {
 public:
  // immutable: read-only, and SQLite assumes nobody changes the file (no locks, no -shm or -wal
  // files), so a DB in a folder kbv cannot write to can still be read.
  enum class Mode { read_only, read_write, immutable };

  // Opens (read_write: creates) `path`. Busy waits up to `busy_timeout_ms` on a locked DB.
  SqliteDb(const std::string& path, Mode mode, int busy_timeout_ms);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  void exec(std::string_view sql);  // one or more statements, no results
  SqliteStatement prepare(std::string_view sql);
  bool table_exists(std::string_view name);
  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

class SqliteStatement {
 public:
  SqliteStatement(SqliteDb& db, std::string_view sql);
  ~SqliteStatement();
  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement& operator=(SqliteStatement&&) = delete;
  SqliteStatement(const SqliteStatement&) = delete;

  // Binds are 1-based, as in SQLite.
  void bind_null(int index);
  void bind(int index, std::int64_t value);
  void bind(int index, int value) { bind(index, static_cast<std::int64_t>(value)); }
  void bind(int index, double value);
  void bind(int index, std::string_view value);
  void bind(int index, const char* value) { bind(index, std::string_view(value)); }
  void bind(int index, const std::string& value) { bind(index, std::string_view(value)); }

  bool step();        // true while a row is available
  void run();         // step to completion, expecting no rows
  void reset();       // ready to bind and step again (binds cleared)

  // Columns are 0-based, as in SQLite.
  bool column_is_null(int index) const;
  std::int64_t column_int(int index) const;
  double column_double(int index) const;
  std::string column_text(int index) const;
  int column_count() const;
  std::string column_name(int index) const;

 private:
  [[noreturn]] void fail(const char* what) const;
  sqlite3_stmt* stmt_ = nullptr;
  sqlite3* db_ = nullptr;
};

// Commits on commit(); rolls back if destroyed before that (an exception unwinding).
class SqliteTransaction {
 public:
  explicit SqliteTransaction(SqliteDb& db);
  ~SqliteTransaction();
  SqliteTransaction(const SqliteTransaction&) = delete;
  SqliteTransaction& operator=(const SqliteTransaction&) = delete;
  void commit();

 private:
  SqliteDb& db_;
  bool done_ = false;
};

}  // namespace kbv
