#pragma once
// Reading (and damaging, and locking) a results DB from a test the way another program would:
// through SQLite directly, not through kbv.
#include <sqlite3.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kbv::testing {

// The first column of every row of `sql`; empty when the DB cannot be read (yet).
inline std::vector<std::string> query(const std::string& db, const std::string& sql) {
  std::vector<std::string> out;
  sqlite3* h = nullptr;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(h);
    return out;
  }
  sqlite3_busy_timeout(h, 2000);
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr) == SQLITE_OK)
    while (sqlite3_step(st) == SQLITE_ROW) {
      const unsigned char* t = sqlite3_column_text(st, 0);
      out.push_back(t ? reinterpret_cast<const char*>(t) : "");
    }
  sqlite3_finalize(st);
  sqlite3_close(h);
  return out;
}

inline void execute(const std::string& db, const std::string& sql) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  sqlite3_busy_timeout(h, 5000);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(h, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(h);
}

// Another program holding the DB's write lock (BEGIN IMMEDIATE) until release() or destruction.
class WriteLockHolder {
 public:
  explicit WriteLockHolder(const std::string& db) {
    EXPECT_EQ(sqlite3_open(db.c_str(), &h_), SQLITE_OK);
    sqlite3_busy_timeout(h_, 10000);
    EXPECT_EQ(sqlite3_exec(h_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(h_);
  }
  ~WriteLockHolder() { release(); }
  void release() {
    if (!h_) return;
    sqlite3_exec(h_, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(h_);
    h_ = nullptr;
  }

 private:
  sqlite3* h_ = nullptr;
};

}  // namespace kbv::testing
